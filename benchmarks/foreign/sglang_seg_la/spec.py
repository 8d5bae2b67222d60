"""SGLang's segmented linear attention, prefill (SGLang v0.5.9, Apache-2.0; from Ant
Group's flood), as kbopt sees it: a kernel nobody here wrote, fetched into the git-ignored
third_party/ by `scripts/fetch_third_party.py sglang_seg_la` and never committed.

Why this one as the set's linear-attention prefill: the Ling/Ring linear models
(`bailing_moe_linear`: Ring-mini-linear-2.0, Ring-flash-linear-2.0) run their linear-
attention layers through SGLang's hybrid linear backend, whose default `linear_backend` is
seg_la, and every extend batch launches this kernel once per linear layer.  Unlike the
lightning attention of `vllm_lightning_attn_diag` (the diagonal blocks only, in parallel
over blocks) and the Mamba-2 chunk scan of `vllm_ssd_chunk_scan` (the entering states given),
one program here owns a K_SPLIT x V_SPLIT tile of one request's and head's state and walks
all of the request's tokens in order, 32 at a time: four fp32 tl.dots per step (the causal
intra-block scores, their product with v, q against the carried state, the state's
k^T v update) with the per-head exponential decay folded into q and k, then the state
written back in place to the request's slot.  The grid is only requests x heads x 16 (or 8)
state tiles, each program's work the request's whole length: a serial chain of small
tl.dots.  The K-split partial outputs are summed afterwards (torch below 2048 tokens, a
second kernel from 2048).  Both trials are a layer of 16 heads of 128 (Ring-mini-linear-
2.0's attention shape, as its Ling-mini-2.0 base declares; seg_la has no GQA) at TP 1: a
prefill batch of 4 requests of 256 new tokens (two continuing chunked prompts, two new) and
one 8192-token chunk (SGLang's default chunked-prefill size on an H100) of a long prompt.
The floor is reading q, k, v and the continuing states once and writing the output and the
final states once.
"""

from __future__ import annotations

from collections.abc import Mapping

from foreign import _common
from kbopt.kernel import Dim, KernelSpec, Knob, Trial

_common.require_sources(__file__, "sglang_seg_la")

ELEMENT_SIZE = _common.ELEMENT_SIZE
CONTEXTS = ("attention", "gemm", "multi-kernel")  # linear attention: a serial walk of tl.dots


def bytes_moved(d: Mapping[str, int], dtype: str = "bfloat16") -> int:
    """q, k and v read once, the output written once, each request's fp32 state read and
    written once."""
    tokens = d["reqs"] * d["tokens"] * d["heads"] * d["head_dim"]
    states = d["reqs"] * d["heads"] * d["head_dim"] ** 2
    return 4 * tokens * ELEMENT_SIZE[dtype] + 2 * states * 4


def flops(d: Mapping[str, int]) -> int:
    """The recurrence's: per token and head, the state's k^T v update and q against the
    state, 2 head_dim^2 multiply-adds (the kernel's chunked form does more)."""
    return 4 * d["reqs"] * d["tokens"] * d["heads"] * d["head_dim"] ** 2


_make_inputs = _common.forward_make_inputs("sglang_seg_la", "reqs", "tokens", "heads", "head_dim")
_reference = _common.forward_reference("sglang_seg_la")
_baselines = _common.forward_baselines(
    "sglang_seg_la",
    ("torch", "torch", "the same recurrence as a loop of torch kernels over the tokens, fp32",
     "torch_seg_la"),
)  # fmt: skip


_launch_info = _common.triton_launch_info("foreign.sglang_seg_la.launcher")


TRITON_KNOBS = (
    Knob("k_split", "int", (None, 16, 32, 64, 128), "tile_k",
         "state rows (head_dim's K side) per program; head_dim / k_split partial outputs "
         "are summed afterwards (none at 128); None: SGLang's 32"),
    Knob("v_split", "int", (None, 16, 32, 64, 128), "tile_n",
         "state columns (the V side) per program; None: SGLang's 32 for at most 2 requests, "
         "64 above"),
    Knob("block", "int", (None, 16, 32, 64, 128), "tile_m",
         "tokens per step of the serial walk (the intra-block square's side); None: "
         "SGLang's 32"),
    Knob("num_warps", "int", (None, 1, 2, 4, 8), "warps",
         "warps per program; None: SGLang's 2"),
    Knob("num_stages", "int", (None, 1, 2, 3, 4), "pipeline_stages",
         "software-pipeline depth of the token walk; None: SGLang's 3"),
)  # fmt: skip

SPEC = KernelSpec(
    name="sglang_seg_la",
    description=(
        "SGLang's segmented linear attention prefill (v0.5.9, Ling/Ring linear models): one "
        "program per request, head and 32 x 32 (or 32 x 64) fp32 state tile walks the "
        "request's tokens 32 at a time in four fp32 tl.dots with per-head decay, the state "
        "written back in place; K-split partials summed after"
    ),
    dims=(
        Dim("reqs", "requests in the extend batch", "batch"),
        Dim("tokens", "new tokens per request, walked in order", "query_len"),
        Dim("heads", "linear-attention heads (q, k and v alike)", "num_heads"),
        Dim("head_dim", "head size (the state is head_dim x head_dim)", "head_dim"),
    ),
    trials=(
        Trial(
            "ring_mini_linear_extend_4x256",
            {"reqs": 4, "tokens": 256, "heads": 16, "head_dim": 128},
            "a prefill batch of 4 requests of 256 new tokens (two continue chunked prompts) "
            "through a Ring-mini-linear-2.0 linear-attention layer (16 heads of 128): 512 "
            "programs (4 requests x 16 heads x 4 x 2 state tiles of 32 x 64) walking 8 steps "
            "each, then a torch sum of 4 partials; 25 MB moved (bf16)",
        ),
        Trial(
            "ring_mini_linear_chunk_8192",
            {"reqs": 1, "tokens": 8192, "heads": 16, "head_dim": 128},
            "one 8192-token chunk (SGLang's chunked-prefill size on an H100) of a long prompt "
            "continuing from its state: 256 programs (16 heads x 16 state tiles of 32 x 32) "
            "walking 256 steps each, then the sum kernel over 8192 tokens; 136 MB moved (bf16)",
        ),
    ),
    backoff_dim="tokens",
    make_inputs=_make_inputs,
    reference=_reference,
    flops=flops,
    bytes_moved=lambda d: bytes_moved(d, SPEC.dtype),
    # fp32 tl.dots run as TF32 on the GPU (Triton's default for fp32 operands), and the
    # K-split partials are rounded to the dtype before they are summed
    tolerances={"bfloat16": 2e-2, "float16": 1e-2, "float32": 1e-2},
    entry_point="seg_la",
    families=("triton",),
    knobs={"triton": TRITON_KNOBS},
    baselines=_baselines,
    compare_with=("torch",),
    launch_info=_launch_info,
    contexts=CONTEXTS,
)
