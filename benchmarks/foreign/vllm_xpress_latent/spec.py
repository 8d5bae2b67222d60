"""vLLM's XPress latent pass (vLLM v0.34.0, Apache-2.0), as kbopt sees it: a kernel nobody
here wrote, fetched into the git-ignored third_party/ by `scripts/fetch_third_party.py
vllm_xpress_latent` and never committed.

Why this one as the set's fused tiny-MLP chain: vLLM's XPress speculator (a Jacobi draft
head over a Qwen3 target, vllm/v1/worker/gpu/spec_decode/xpress/) refines each request's
block of 16 draft slots in several passes per decode step, and each pass's latent stage is
one launch: per block, the previous tokens' embeddings gathered and projected by an
R x R tl.dot, a per-channel causal mix over the 16 slots, then a SwiGLU MLP with a
residual in 64-column tl.dot steps of its 512 hidden columns.  One program per block reads
the whole head's ~1 MB of weights (the same for every program, so L2-resident after the
first) and does about 15 MFLOP on a 16-row tile: a latency-bound chain of small GEMMs,
whose cost vLLM's own launch comment measures at batch 1 (76.7 us before its 3 stages,
61.0 us with them).  Both trials are the Qwen3 XPress head's defaults (rank 256, MLP
hidden 512, 16 slots, Qwen3's 151,936-token vocabulary): one request (batch 1, one program on one SM) and 256
requests (vLLM's default max_num_seqs: 256 programs).  The floor is reading the weights
once and each block's hidden cache, gathered embeddings and latent once; the work is
14.8 MFLOP per block on the 16-row tiles.
"""

from __future__ import annotations

from collections.abc import Mapping

from foreign import _common
from kbopt.kernel import Dim, KernelSpec, Knob, Trial

_common.require_sources(__file__, "vllm_xpress_latent")

ELEMENT_SIZE = _common.ELEMENT_SIZE
CONTEXTS = ("gemm", "small-grid")  # a chain of 16-row GEMMs per program, few programs
INT64 = 8


def bytes_moved(d: Mapping[str, int], dtype: str = "bfloat16") -> int:
    """The head's weights (projection, mixer, MLP) read once, and per block its tokens, its
    hidden cache and its gathered embedding rows read and its latent written."""
    n, b, r, h = d["reqs"], d["block"], d["rank"], d["mlp_hidden"]
    weights = r * r + b * b * r + 3 * r * h
    per_block = b * r + b * r + (b - 1) * r
    return (weights + n * per_block) * ELEMENT_SIZE[dtype] + n * (b + 1) * INT64


def flops(d: Mapping[str, int]) -> int:
    """Per block: the projection (2 B R R), the mixer (2 B B R) and the MLP's three GEMMs
    (6 B R H); the SiLU and products not counted."""
    n, b, r, h = d["reqs"], d["block"], d["rank"], d["mlp_hidden"]
    return n * (2 * b * r * r + 2 * b * b * r + 6 * b * r * h)


_make_inputs = _common.forward_make_inputs(
    "vllm_xpress_latent", "reqs", "block", "rank", "mlp_hidden", "vocab"
)
_reference = _common.forward_reference("vllm_xpress_latent")
_baselines = _common.forward_baselines(
    "vllm_xpress_latent",
    (
        "torch",
        "torch",
        "the same by torch ops in the dtype: the embedding gather, one GEMM, the mixer as "
        "a batched matmul over channels, the MLP as three GEMMs",
        "torch_latent",
    ),
)


_launch_info = _common.triton_launch_info("foreign.vllm_xpress_latent.launcher")


TRITON_KNOBS = (
    Knob("hidden_tile", "int", (None, 16, 32, 64, 128, 256), "tile_n",
         "MLP hidden columns per loop step (gate/up tile width, down-projection depth; "
         "must divide the MLP hidden size); None: vLLM's 64"),
    Knob("num_warps", "int", (None, 1, 2, 4, 8, 16), "warps",
         "warps per program; None: vLLM's 8"),
    Knob("num_stages", "int", (None, 1, 2, 3, 4), "pipeline_stages",
         "software-pipeline depth of the loop over the MLP hidden size; None: vLLM's 3"),
)  # fmt: skip

SPEC = KernelSpec(
    name="vllm_xpress_latent",
    description=(
        "vLLM's XPress speculator latent pass (v0.34.0, _xpress_latent_kernel): one program "
        "per draft block gathers and projects the previous tokens' embeddings, mixes the "
        "slots causally per channel and applies a SwiGLU MLP with a residual, in tl.dot tiles"
    ),
    dims=(
        Dim("reqs", "draft blocks (requests) in the pass", "batch"),
        Dim("block", "draft slots per block, the anchor included"),
        Dim("rank", "latent rank R (a power of two)"),
        Dim("mlp_hidden", "SwiGLU hidden size H"),
        Dim("vocab", "token embedding rows (the target's vocabulary)"),
    ),
    trials=(
        Trial(
            "xpress_bs1_qwen3",
            {"reqs": 1, "block": 16, "rank": 256, "mlp_hidden": 512, "vocab": 151936},
            "one pass of the Qwen3 XPress head's defaults (rank 256, MLP hidden 512, 16 "
            "slots, Qwen3's 151,936-token vocabulary) at batch 1, the case vLLM's launch "
            "comment measures: one program, 14.8 MFLOP, 1 MB of weights",
        ),
        Trial(
            "xpress_bs256_qwen3",
            {"reqs": 256, "block": 16, "rank": 256, "mlp_hidden": 512, "vocab": 151936},
            "the same pass at vLLM's default 256 running requests: 256 programs, 3.8 GFLOP, "
            "the weights shared through L2",
        ),
    ),
    backoff_dim="reqs",
    make_inputs=_make_inputs,
    reference=_reference,
    flops=flops,
    bytes_moved=lambda d: bytes_moved(d, SPEC.dtype),
    # the mixer's output rounded to the dtype before the MLP's tl.dots (as vLLM does);
    # fp32 tl.dot runs as tf32 on the GPU
    tolerances={"bfloat16": 3e-2, "float16": 5e-3, "float32": 5e-3},
    entry_point="latent",
    families=("triton",),
    knobs={"triton": TRITON_KNOBS},
    baselines=_baselines,
    compare_with=("torch",),
    launch_info=_launch_info,
    contexts=CONTEXTS,
)
