"""SGLang's block-wise fp8 W8A8 GEMM (SGLang v0.5.9, Apache-2.0), as kbopt sees it: a
kernel nobody here wrote, fetched into the git-ignored third_party/ by
`scripts/fetch_third_party.py sglang_fp8_kernel` and never committed.

The linear layers of a block-fp8 checkpoint (Qwen3-FP8, DeepSeek-V3 style: weights in e4m3
with one fp32 scale per 128 x 128 block, activations in e4m3 with one scale per token and
128 columns) when DeepGEMM is not used: an fp8 tl.dot per 128-deep step (wgmma on sm_90),
each step's partial product scaled by its two scales into an fp32 accumulator, bf16 out.
The floor is the larger of reading both e4m3 operands and their scales once and writing C
once, and the matmul's flops against the fp8 matmul rate (`matmul_dtype`: kbopt measures
that ceiling with torch's scaled fp8 matmul, about twice the bf16 rate on the H200; the
first profiles of this spec, taken against the bf16 rate, put the 8k-token prefill above
its floor).  The spec's dtype is C's dtype: A and B are e4m3 whatever it is.
"""

from __future__ import annotations

from collections.abc import Mapping

from foreign import _common
from kbopt.kernel import Dim, KernelSpec, Knob, Trial

_common.require_sources(__file__, "sglang_fp8_kernel")

ELEMENT_SIZE = _common.ELEMENT_SIZE
CONTEXTS = ("gemm",)  # the decode trial streams the weights, the prefill one is compute-bound
BLOCK = 128


def bytes_moved(d: Mapping[str, int], dtype: str = "bfloat16") -> int:
    """A and B (one byte each) read once, their fp32 scales read once, C written once."""
    kb = -(-d["k"] // BLOCK)
    nb = -(-d["n"] // BLOCK)
    scales = 4 * (d["m"] * kb + nb * kb)
    return d["m"] * d["k"] + d["n"] * d["k"] + scales + ELEMENT_SIZE[dtype] * d["m"] * d["n"]


def flops(d: Mapping[str, int]) -> int:
    return 2 * d["m"] * d["n"] * d["k"]


_make_inputs = _common.forward_make_inputs("sglang_fp8_block_gemm", "m", "n", "k")
_reference = _common.forward_reference("sglang_fp8_block_gemm")
_baselines = _common.forward_baselines(
    "sglang_fp8_block_gemm",
    (
        "torch",
        "torch",
        "both operands dequantized to the output dtype, then torch's matmul",
        "torch_dequant_matmul",
    ),
)


_launch_info = _common.triton_launch_info("foreign.sglang_fp8_block_gemm.launcher")


TRITON_KNOBS = (
    Knob("block_m", "int", (None, 16, 32, 64, 128, 256), "tile_m",
         "rows of C (tokens) per program; None: SGLang's default 64"),
    Knob("block_n", "int", (None, 32, 64, 128, 256), "tile_n",
         "columns of C per program; None: the quantization block, 128"),
    Knob("group_m", "int", (None, 1, 4, 8, 16, 32, 64), "grouping",
         "row blocks launched together before the column moves on; None: SGLang's 32"),
    Knob("num_warps", "int", (None, 2, 4, 8), "warps",
         "warps per program; None: SGLang's default 4"),
    Knob("num_stages", "int", (None, 1, 2, 3, 4, 5), "pipeline_stages",
         "software-pipeline depth of the K loop; None: SGLang's default 3"),
)  # fmt: skip

SPEC = KernelSpec(
    name="sglang_fp8_block_gemm",
    description=(
        "SGLang's block-wise fp8 W8A8 GEMM (v0.5.9): e4m3 activations (per token and "
        "128-column scales) times e4m3 weights (per 128 x 128 block scales), fp8 tl.dot per "
        "128-deep step scaled into fp32, bf16 out"
    ),
    dims=(
        Dim("m", "tokens (rows of A and C)", "rows"),
        Dim("n", "output features (rows of the weight)"),
        Dim("k", "input features (the depth)"),
    ),
    trials=(
        Trial(
            "decode_down_proj_qwen3_32b_fp8",
            {"m": 64, "n": 5120, "k": 25600},
            "a 64-sequence decode step through Qwen3-32B-FP8's down projection: 131 MB of "
            "e4m3 weights streamed by 40 programs (SGLang's 64 x 128 tiles), 16.8 GFLOP",
        ),
        Trial(
            "prefill_qkv_qwen3_32b_fp8",
            {"m": 8192, "n": 10240, "k": 5120},
            "an 8k-token prefill chunk through Qwen3-32B-FP8's QKV projection: 859 GFLOP in "
            "10,240 programs of 64 x 128, 264 MB moved",
        ),
    ),
    backoff_dim="m",
    make_inputs=_make_inputs,
    reference=_reference,
    flops=flops,
    bytes_moved=lambda d: bytes_moved(d, SPEC.dtype),
    # exact e4m3 products summed in fp32 per step, scaled in fp32, one rounding to C's dtype
    tolerances={"bfloat16": 1e-2, "float16": 2e-3, "float32": 2e-3},
    entry_point="w8a8_block_fp8_matmul",
    families=("triton",),
    knobs={"triton": TRITON_KNOBS},
    baselines=_baselines,
    compare_with=("torch",),
    launch_info=_launch_info,
    contexts=CONTEXTS,
    matmul_dtype="float8_e4m3fn",
)
