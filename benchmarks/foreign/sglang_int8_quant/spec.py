"""SGLang's per-token int8 activation quantization (SGLang v0.5.9, Apache-2.0), as kbopt sees
it: a kernel nobody here wrote, fetched into the git-ignored third_party/ by
`scripts/fetch_third_party.py sglang_int8_quant` and never committed.

W8A8 int8 serving quantizes each token's activation row before the int8 GEMM that reads it:
one program per row holds the whole row in registers, reduces it to its absolute maximum,
and writes the int8 row and one fp32 scale.  Outputs: the int8 rows and the [tokens, 1]
scales.  No matmul: the floor is reading the bf16 rows once and writing the int8 rows and
scales once.
"""

from __future__ import annotations

from collections.abc import Mapping

from foreign import _common
from kbopt.kernel import Dim, KernelSpec, Knob, Trial

_common.require_sources(__file__, "sglang_int8_quant")

ELEMENT_SIZE = _common.ELEMENT_SIZE
CONTEXTS = ("reduction", "elementwise", "memory-bound")


def bytes_moved(d: Mapping[str, int], dtype: str = "bfloat16") -> int:
    """The rows read once, the int8 rows written once, one fp32 scale per row."""
    return (ELEMENT_SIZE[dtype] + 1) * d["rows"] * d["hidden"] + 4 * d["rows"]


_make_inputs = _common.forward_make_inputs("sglang_int8_quant", "rows", "hidden")
_reference = _common.forward_reference("sglang_int8_quant")
_baselines = _common.forward_baselines(
    "sglang_int8_quant",
    (
        "torch",
        "torch",
        "the same quantization in torch's kernels (abs, amax, scale, round, cast)",
        "torch_per_token_quant",
    ),
)


_launch_info = _common.triton_launch_info("foreign.sglang_int8_quant.launcher")


TRITON_KNOBS = (
    Knob(
        "num_warps",
        "int",
        (None, 1, 2, 4, 8, 16, 32),
        "warps",
        "warps per program (one whole row); None: SGLang's min(max(next_pow2(hidden) // 256, "
        "1), 8)",
    ),
)

SPEC = KernelSpec(
    name="sglang_int8_quant",
    description=(
        "SGLang's per-token int8 activation quantization (v0.5.9): one program per token row "
        "(absmax, scale, round to int8), the whole row in registers, bf16 in, int8 out"
    ),
    dims=(
        Dim("rows", "tokens (activation rows)", "rows"),
        Dim("hidden", "row width (the GEMM's input features)", "row_len"),
    ),
    trials=(
        Trial(
            "prefill_llama3_70b",
            {"rows": 8192, "hidden": 8192},
            "an 8k-token prefill chunk of W8A8 Llama-3-70B before the QKV projection: 201 MB "
            "moved by 8192 one-row programs",
        ),
        Trial(
            "decode_down_proj_70b",
            {"rows": 64, "hidden": 28672},
            "a 64-sequence decode step before Llama-3-70B's down projection (28672 wide): 5.5 "
            "MB by 64 programs on 132 SMs, each holding a 32768-column block in registers",
        ),
    ),
    backoff_dim="rows",
    make_inputs=_make_inputs,
    reference=_reference,
    flops=lambda d: 0,
    bytes_moved=lambda d: bytes_moved(d, SPEC.dtype),
    # the same fp32 arithmetic; an int8 value may differ by one where x * 127 / absmax
    # falls within rounding of a half
    tolerances={"bfloat16": 1e-3, "float16": 1e-3, "float32": 1e-3},
    entry_point="per_token_quant_int8",
    families=("triton",),
    knobs={"triton": TRITON_KNOBS},
    baselines=_baselines,
    compare_with=("torch",),
    launch_info=_launch_info,
    contexts=CONTEXTS,
)
