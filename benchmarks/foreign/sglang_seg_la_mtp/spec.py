"""SGLang's segmented linear attention, MTP verify (SGLang v0.5.9, Apache-2.0; from Ant
Group's flood), as kbopt sees it: a kernel nobody here wrote, fetched into the git-ignored
third_party/ by `scripts/fetch_third_party.py sglang_seg_la_mtp` and never committed.

Why this one: the Ling/Ring linear models (`bailing_moe_linear`) run their linear-attention
layers through SGLang's hybrid linear backend (default `linear_backend` seg_la); under
speculative decoding with one draft per step, every verify pass of the target model launches
this kernel once per linear layer, with the backend's intermediate-state cache.  Unlike the
prefill kernel of `sglang_seg_la` (32-token blocks in four fp32 tl.dots, the final state
written once), it has no tensor-core work at all: one program per request, head and
K_SPLIT x V_SPLIT tile of the fp32 state walks the request's few draft tokens one at a time,
a rank-1 decayed update and a row reduction per token, and stores the whole state tile to
the cache after every token, so that the verifier can roll back to any accepted prefix.
The state pool is only read.  So its traffic is the state read once and written `step`
times, against a few flops per byte: a streaming store kernel with a serial loop.  Nearest
otherwise: `sglang_gdn_recurrent` and `vllm_lightning_decode` (recurrent state updates over
tokens, the state written once at the end), `sglang_mamba_state_update` (one token).  Both
trials are a layer of 16 heads of 128 (Ring-mini-linear-2.0's attention shape, as
`sglang_seg_la` takes it) at TP 1, verifying 4 draft tokens per request (3 speculative
steps): 64 requests (SGLang's V_SPLIT of 64 above 2 requests), and 2 (its V_SPLIT of 32).
The floor is reading q, k, v and the requests' states once and writing the output and the
`step` cached states once.
"""

from __future__ import annotations

from collections.abc import Mapping

from foreign import _common
from kbopt.kernel import Dim, KernelSpec, Knob, Trial

_common.require_sources(__file__, "sglang_seg_la_mtp")

ELEMENT_SIZE = _common.ELEMENT_SIZE
CONTEXTS = ("attention", "memory-bound", "multi-kernel")  # linear attention: a state stream


def bytes_moved(d: Mapping[str, int], dtype: str = "bfloat16") -> int:
    """q, k and v read once, the output written once, each request's fp32 state read once
    and its fp32 state after every draft token written once to the cache."""
    tokens = d["reqs"] * d["step"] * d["heads"] * d["head_dim"]
    states = d["reqs"] * d["heads"] * d["head_dim"] ** 2
    return 4 * tokens * ELEMENT_SIZE[dtype] + (1 + d["step"]) * states * 4


def flops(d: Mapping[str, int]) -> int:
    """Per token and head, the state's decay and k^T v update and q against the state,
    2 head_dim^2 multiply-adds."""
    return 4 * d["reqs"] * d["step"] * d["heads"] * d["head_dim"] ** 2


_make_inputs = _common.forward_make_inputs("sglang_seg_la_mtp", "reqs", "step", "heads", "head_dim")
_reference = _common.forward_reference("sglang_seg_la_mtp")
_baselines = _common.forward_baselines(
    "sglang_seg_la_mtp",
    ("torch", "torch", "the same recurrence as a loop of torch kernels over the draft steps, "
     "fp32, the cache written in place", "torch_seg_la_mtp"),
)  # fmt: skip


_launch_info = _common.triton_launch_info("foreign.sglang_seg_la_mtp.launcher")


TRITON_KNOBS = (
    Knob("k_split", "int", (None, 16, 32, 64, 128), "tile_k",
         "state rows (head_dim's K side) per program; head_dim / k_split partial outputs "
         "are summed afterwards (none at 128); None: SGLang's 32"),
    Knob("v_split", "int", (None, 16, 32, 64, 128), "tile_n",
         "state columns (the V side) per program; None: SGLang's 32 for at most 2 requests, "
         "64 above"),
    Knob("num_warps", "int", (None, 1, 2, 4, 8), "warps",
         "warps per program; None: SGLang's 2"),
    Knob("num_stages", "int", (None, 1, 2, 3, 4), "pipeline_stages",
         "software-pipeline depth of the draft-token loop; None: SGLang's 3"),
)  # fmt: skip

SPEC = KernelSpec(
    name="sglang_seg_la_mtp",
    description=(
        "SGLang's segmented linear attention MTP verify (v0.5.9, Ling/Ring linear models "
        "under speculative decoding): one program per request, head and 32 x 64 (or 32 x 32) "
        "fp32 state tile walks the draft tokens one at a time, a decayed rank-1 update and a "
        "row reduction each, no tensor cores, the state tile stored to the intermediate-state "
        "cache after every token; K-split partials summed after"
    ),
    dims=(
        Dim("reqs", "requests in the verify batch", "batch"),
        Dim("step", "draft tokens per request, walked in order", "query_len"),
        Dim("heads", "linear-attention heads (q, k and v alike)", "num_heads"),
        Dim("head_dim", "head size (the state is head_dim x head_dim)", "head_dim"),
    ),
    trials=(
        Trial(
            "ring_mini_linear_verify_64x4",
            {"reqs": 64, "step": 4, "heads": 16, "head_dim": 128},
            "a verify pass of 64 requests with 4 draft tokens each through a Ring-mini-"
            "linear-2.0 linear-attention layer (16 heads of 128): 8,192 programs (64 requests "
            "x 16 heads x 4 x 2 state tiles of 32 x 64) walking 4 tokens each, then a torch "
            "sum of 4 partials; 340 MB moved (the cached states 268 MB of it)",
        ),
        Trial(
            "ring_mini_linear_verify_2x4",
            {"reqs": 2, "step": 4, "heads": 16, "head_dim": 128},
            "a verify pass of 2 requests with 4 draft tokens each, same layer: 512 programs "
            "(2 requests x 16 heads x 4 x 4 state tiles of 32 x 32) walking 4 tokens each, "
            "then a torch sum of 4 partials; 10.6 MB moved",
        ),
    ),
    backoff_dim="reqs",
    make_inputs=_make_inputs,
    reference=_reference,
    flops=flops,
    bytes_moved=lambda d: bytes_moved(d, SPEC.dtype),
    # fp32 arithmetic throughout; the K-split partials are rounded to the dtype before they
    # are summed, the cached states stay fp32
    tolerances={"bfloat16": 2e-2, "float16": 1e-2, "float32": 1e-3},
    entry_point="seg_la_mtp",
    families=("triton",),
    knobs={"triton": TRITON_KNOBS},
    baselines=_baselines,
    compare_with=("torch",),
    launch_info=_launch_info,
    contexts=CONTEXTS,
)
