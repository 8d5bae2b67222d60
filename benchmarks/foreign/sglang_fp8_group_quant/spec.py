"""SGLang's per-token-group fp8 quantization (SGLang v0.5.9, Apache-2.0), as kbopt sees it:
a kernel nobody here wrote, fetched into the git-ignored third_party/ by
`scripts/fetch_third_party.py sglang_fp8_kernel` and never committed.

Block-wise fp8 (W8A8, 128 x 128 weight blocks, DeepSeek-V3 and Qwen3-FP8 style) quantizes
each activation row in groups of 128 columns before the block fp8 GEMM: one tiny program
per group (128 values, one warp) reduces it to its absolute maximum and writes 128 e4m3
values and one fp32 scale.  Outputs: the e4m3 rows and the [tokens, hidden / 128] scales.
No matmul: the floor is reading the bf16 rows once and writing the fp8 rows and the scales
once.  Unlike the per-token int8 quantization (a whole row per program), the work is
rows * hidden / 128 programs of 256 bytes each.
"""

from __future__ import annotations

from collections.abc import Mapping

from foreign import _common
from kbopt.kernel import Dim, KernelSpec, Knob, Trial

_common.require_sources(__file__, "sglang_fp8_kernel")

ELEMENT_SIZE = _common.ELEMENT_SIZE
CONTEXTS = ("reduction", "elementwise", "memory-bound")


def bytes_moved(d: Mapping[str, int], dtype: str = "bfloat16") -> int:
    """The rows read once, the e4m3 rows written once, one fp32 scale per group."""
    return (ELEMENT_SIZE[dtype] + 1) * d["rows"] * d["hidden"] + 4 * d["rows"] * (
        d["hidden"] // d["group"]
    )


_make_inputs = _common.forward_make_inputs("sglang_fp8_group_quant", "rows", "hidden", "group")
_reference = _common.forward_reference("sglang_fp8_group_quant")
_baselines = _common.forward_baselines(
    "sglang_fp8_group_quant",
    (
        "torch",
        "torch",
        "the same quantization in torch's kernels (abs, amax, scale, clamp, cast to e4m3)",
        "torch_group_quant",
    ),
)


_launch_info = _common.triton_launch_info("foreign.sglang_fp8_group_quant.launcher")


TRITON_KNOBS = (
    Knob(
        "num_warps",
        "int",
        (None, 1, 2, 4, 8),
        "warps",
        "warps per program (one group); None: SGLang's min(max(next_pow2(group) // 256, 1), 8), "
        "1 for 128-wide groups",
    ),
)

SPEC = KernelSpec(
    name="sglang_fp8_group_quant",
    description=(
        "SGLang's per-token-group fp8 quantization (v0.5.9): one program per 128-column "
        "group of a token row (absmax, scale, clamp, cast to e4m3), bf16 in, e4m3 and fp32 "
        "scales out"
    ),
    dims=(
        Dim("rows", "tokens (activation rows)", "rows"),
        Dim("hidden", "row width (the GEMM's input features)", "row_len"),
        Dim("group", "columns per quantization group (the weight block's depth, 128)"),
    ),
    trials=(
        Trial(
            "prefill_qwen3_32b_fp8",
            {"rows": 8192, "hidden": 5120, "group": 128},
            "an 8k-token prefill chunk of Qwen3-32B-FP8 before its QKV projection: 327,680 "
            "one-warp programs of 128 values, 127 MB moved",
        ),
        Trial(
            "decode_down_proj_qwen3_32b_fp8",
            {"rows": 64, "hidden": 25600, "group": 128},
            "a 64-sequence decode step before Qwen3-32B-FP8's down projection (25600 wide): "
            "12,800 programs, 5.0 MB moved",
        ),
    ),
    backoff_dim="rows",
    make_inputs=_make_inputs,
    reference=_reference,
    flops=lambda d: 0,
    bytes_moved=lambda d: bytes_moved(d, SPEC.dtype),
    # the same fp32 arithmetic and a round-to-nearest cast; an e4m3 value may differ by one
    # step (1/8 to 1/16 of it) where x / scale falls within rounding of a half
    tolerances={"bfloat16": 1e-3, "float16": 1e-3, "float32": 1e-3},
    entry_point="per_token_group_quant_fp8",
    families=("triton",),
    knobs={"triton": TRITON_KNOBS},
    baselines=_baselines,
    compare_with=("torch",),
    launch_info=_launch_info,
    contexts=CONTEXTS,
)
