"""FLA's L2 norm as vLLM ships it (vLLM v0.34.0, Apache-2.0; FLA's code is MIT), as kbopt
sees it: a kernel nobody here wrote, fetched into the git-ignored third_party/ by
`scripts/fetch_third_party.py vllm_l2norm` and never committed.

Why this one as the set's small-row normalization: Qwen3-Next's gated-delta-net layers
(three of every four layers) divide every q and k head by its Euclidean norm before each
chunked prefill, two launches per layer.  Unlike the RMSNorms already in the set there is no
weight and the rows are one head long (128 elements, 256 bytes in bf16): vLLM's default
kernel packs 32 head vectors into an [32, 128] tile per program, sums the squares per row
in fp32 and stores x * rsqrt(sum + eps).  Memory-bound: one read and one write per element,
a reduction across 128 columns.  Both trials are Qwen3-Next-80B's q (16 heads of 128) in
one call: eight 32-token prompts packed into one prefill (256 tokens, 128 programs, under
one wave of the H200's 132 SMs) and one 8192-token prompt (4,096 programs, 67 MB moved).
Output: the normalized tensor (same shape and dtype).  The floor is reading the input and
writing the output once.
"""

from __future__ import annotations

from collections.abc import Mapping

from foreign import _common
from kbopt.kernel import Dim, KernelSpec, Knob, Trial

_common.require_sources(__file__, "vllm_l2norm")

ELEMENT_SIZE = _common.ELEMENT_SIZE
CONTEXTS = ("normalization", "reduction", "memory-bound")


def bytes_moved(d: Mapping[str, int], dtype: str = "bfloat16") -> int:
    """The input read once and the output written once."""
    return 2 * ELEMENT_SIZE[dtype] * d["tokens"] * d["heads"] * d["head_dim"]


def flops(d: Mapping[str, int]) -> int:
    """A square and an add per element for the sum, a multiply per element for the scale
    (the rsqrt per row not counted)."""
    return 3 * d["tokens"] * d["heads"] * d["head_dim"]


_make_inputs = _common.forward_make_inputs("vllm_l2norm", "tokens", "heads", "head_dim")
_reference = _common.forward_reference("vllm_l2norm")
_baselines = _common.forward_baselines(
    "vllm_l2norm",
    (
        "torch",
        "torch",
        "the same by torch ops in fp32: squares summed per head, rsqrt, scaled, cast",
        "torch_l2norm",
    ),
)


_launch_info = _common.triton_launch_info("foreign.vllm_l2norm.launcher")


TRITON_KNOBS = (
    Knob("mblock", "int", (None, 1, 4, 8, 16, 32, 64, 128), "rows_per_program",
         "head vectors (rows of the [tokens * heads, head_dim] view) per program; None: "
         "vLLM's 32"),
    Knob("num_warps", "int", (None, 1, 2, 4, 8, 16), "warps",
         "warps per program; None: Triton's default 4 (vLLM passes none)"),
    Knob("num_stages", "int", (None, 1, 2, 3, 4), "pipeline_stages",
         "pipeline stages asked of the compiler (the kernel has no loop); None: Triton's "
         "default 3"),
)  # fmt: skip

SPEC = KernelSpec(
    name="vllm_l2norm",
    description=(
        "FLA's L2 norm in vLLM (v0.34.0, l2norm_fwd_kernel2): each head vector of the gated "
        "delta rule's q or k divided by its Euclidean norm in fp32, 32 head vectors of 128 "
        "per program"
    ),
    dims=(
        Dim("tokens", "tokens in the prefill (heads rows each)", "rows"),
        Dim("heads", "heads of q (or k)", "num_heads"),
        Dim("head_dim", "elements per head (the normalized row)", "row_len"),
    ),
    trials=(
        Trial(
            "short_prompts_qwen3_next",
            {"tokens": 256, "heads": 16, "head_dim": 128},
            "eight 32-token prompts packed into one prefill of Qwen3-Next-80B (q: 16 heads "
            "of 128): 4,096 head vectors, 128 programs, 2.1 MB moved",
        ),
        Trial(
            "prefill_qwen3_next_8k",
            {"tokens": 8192, "heads": 16, "head_dim": 128},
            "an 8192-token prompt through the same layer's q: 131,072 head vectors, 4,096 "
            "programs, 67 MB moved",
        ),
    ),
    backoff_dim="tokens",
    make_inputs=_make_inputs,
    reference=_reference,
    flops=flops,
    bytes_moved=lambda d: bytes_moved(d, SPEC.dtype),
    # fp32 sums of 128 squares, one rounding of the output
    tolerances={"bfloat16": 8e-3, "float16": 1e-3, "float32": 1e-5},
    entry_point="l2norm",
    families=("triton",),
    knobs={"triton": TRITON_KNOBS},
    baselines=_baselines,
    compare_with=("torch",),
    launch_info=_launch_info,
    contexts=CONTEXTS,
)
