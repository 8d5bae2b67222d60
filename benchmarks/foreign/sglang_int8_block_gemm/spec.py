"""SGLang's block-wise int8 W8A8 GEMM (SGLang v0.5.9, Apache-2.0), as kbopt sees it: a
kernel nobody here wrote, fetched into the git-ignored third_party/ by
`scripts/fetch_third_party.py sglang_int8_block_gemm` and never committed.

The linear layers of a block-INT8 checkpoint (DeepSeek-R1-Block-INT8, served with
`--quantization w8a8_int8`'s block path: weights in int8 with one fp32 scale per 128 x 128
block, activations quantized per token and 128 columns by SGLang's per-token-group int8
kernel): an int8 tl.dot per 128-deep step (s8 x s8 -> s32 on the tensor cores), each step's
integer product converted to fp32 and scaled by its two scales into an fp32 accumulator, bf16
out.  Its nearest spec is `sglang_fp8_block_gemm` (the same tiling and per-step scaling);
it differs in the integer MMA path: int8 operands, an exact int32 product per step, a
conversion to fp32 per step before the scales, and K masked in every step's loads (the fp8
kernel masks only when K is no multiple of 128).  The floor is the larger of reading both
int8 operands and their scales once and writing C once, and the matmul's operations against
the 8-bit matmul rate (`matmul_dtype` float8_e4m3fn: kbopt has no int8 ceiling; Hopper's
dense int8 and fp8 tensor-core rates are the same).  The spec's dtype is C's dtype: A and B
are int8 whatever it is.
"""

from __future__ import annotations

from collections.abc import Mapping

from foreign import _common
from kbopt.kernel import Dim, KernelSpec, Knob, Trial

_common.require_sources(__file__, "sglang_int8_block_gemm")

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


_make_inputs = _common.forward_make_inputs("sglang_int8_block_gemm", "m", "n", "k")
_reference = _common.forward_reference("sglang_int8_block_gemm")
_baselines = _common.forward_baselines(
    "sglang_int8_block_gemm",
    (
        "torch",
        "torch",
        "both operands dequantized to the output dtype, then torch's matmul",
        "torch_dequant_matmul",
    ),
)


_launch_info = _common.triton_launch_info("foreign.sglang_int8_block_gemm.launcher")


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
    name="sglang_int8_block_gemm",
    description=(
        "SGLang's block-wise int8 W8A8 GEMM (v0.5.9): int8 activations (per token and "
        "128-column scales) times int8 weights (per 128 x 128 block scales), int8 tl.dot per "
        "128-deep step converted and scaled into fp32, bf16 out"
    ),
    dims=(
        Dim("m", "tokens (rows of A and C)", "rows"),
        Dim("n", "output features (rows of the weight)"),
        Dim("k", "input features (the depth)"),
    ),
    trials=(
        Trial(
            "decode_gate_up_deepseek_r1_block_int8_tp16",
            {"m": 64, "n": 2304, "k": 7168},
            "a 64-sequence decode step through DeepSeek-R1-Block-INT8's dense-layer gate_up "
            "projection at TP16 (36,864 / 16 outputs, one of SGLang's shipped int8 table "
            "shapes): 16.5 MB of int8 weights streamed by 18 programs of 64 x 128, 2.1 GFLOP",
        ),
        Trial(
            "prefill_gate_up_deepseek_r1_block_int8_tp16",
            {"m": 8192, "n": 2304, "k": 7168},
            "an 8k-token prefill chunk through the same projection: 271 GOP in 2304 programs "
            "of 64 x 128, 115 MB moved",
        ),
    ),
    backoff_dim="m",
    make_inputs=_make_inputs,
    reference=_reference,
    flops=flops,
    bytes_moved=lambda d: bytes_moved(d, SPEC.dtype),
    # exact int32 products per step, scaled in fp32, one rounding to C's dtype
    tolerances={"bfloat16": 1e-2, "float16": 2e-3, "float32": 2e-3},
    entry_point="w8a8_block_int8_matmul",
    families=("triton",),
    knobs={"triton": TRITON_KNOBS},
    baselines=_baselines,
    compare_with=("torch",),
    launch_info=_launch_info,
    contexts=CONTEXTS,
    matmul_dtype="float8_e4m3fn",
)
