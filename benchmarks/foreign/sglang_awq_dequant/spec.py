"""SGLang's AWQ int4 weight dequantization (SGLang v0.5.9, Apache-2.0; adapted from vLLM), as
kbopt sees it: a kernel nobody here wrote, fetched into the git-ignored third_party/ by
`scripts/fetch_third_party.py sglang_awq_dequant` and never committed.

Why this one: SGLang's AWQ path on ROCm (AWQLinearMethod.apply) runs it in every linear
layer of an AWQ-quantized model at every step, dequantizing the layer's whole weight before
a dense torch.matmul; DeepSeek's AWQ checkpoints go through it for their kv_b projection
too.  It is a pure expansion, no reduction and no tl.dot: each packed int32 becomes eight
output values, the nibbles spread by three tl.interleave, shifted and masked in AWQ's
reversed order, one row of packed zero points and one row of scales per tile broadcast over
its rows, (q - z) * s stored in the scales' dtype.  It reads half a byte per output value
and writes two, so the write stream dominates.  Both trials are AWQ int4 checkpoints (group
128): Llama-3.1-8B-Instruct's fused gate and up projection (4096 -> 2 x 14336, 117 M values)
and Qwen2.5-1.5B-Instruct's attention output projection (1536 -> 1536, the size a small
model's decode step dequantizes per layer).  The floor is reading the packed weights, zero
points and scales once and writing the weight once.
"""

from __future__ import annotations

from collections.abc import Mapping

from foreign import _common
from kbopt.kernel import Dim, KernelSpec, Knob, Trial

_common.require_sources(__file__, "sglang_awq_dequant")

ELEMENT_SIZE = _common.ELEMENT_SIZE
CONTEXTS = ("elementwise", "memory-bound")  # bit unpacking, 4x more bytes written than read


def bytes_moved(d: Mapping[str, int], dtype: str = "float16") -> int:
    """The int4 weights (n / 8 int32 per row) and the packed zero points read once, the
    scales read once, the dequantized weight written once."""
    es = ELEMENT_SIZE[dtype]
    groups = d["k"] // d["group"]
    return d["k"] * d["n"] // 2 + groups * d["n"] // 2 + es * groups * d["n"] + es * d["k"] * d["n"]


def flops(d: Mapping[str, int]) -> int:
    """A subtraction and a multiplication per output value."""
    return 2 * d["k"] * d["n"]


_make_inputs = _common.forward_make_inputs("sglang_awq_dequant", "k", "n", "group")
_reference = _common.forward_reference("sglang_awq_dequant")
_baselines = _common.forward_baselines(
    "sglang_awq_dequant",
    (
        "torch",
        "torch",
        "the same by torch ops (SGLang's NPU decomposition): nibbles shifted out and "
        "reordered, zeros subtracted, scales applied",
        "torch_awq_dequantize",
    ),
)


_launch_info = _common.triton_launch_info("foreign.sglang_awq_dequant.launcher")


TRITON_KNOBS = (
    Knob("block_x", "int", (None, 4, 8, 16, 32, 64, 128), "tile_n",
         "packed int32 columns per program (eight output columns each); None: SGLang's 32"),
    Knob("block_y", "int", (None, 1, 2, 4, 8, 16, 32, 64, 128), "tile_m",
         "weight rows per program, dividing the 128-row group (the tile reads one row of "
         "zeros and scales); None: SGLang's 32"),
    Knob("num_warps", "int", (None, 1, 2, 4, 8, 16), "warps",
         "warps per program; None: Triton's default 4 (SGLang passes none)"),
)  # fmt: skip

SPEC = KernelSpec(
    name="sglang_awq_dequant",
    description=(
        "SGLang's AWQ int4 weight dequantization (v0.5.9, awq_dequantize_kernel, the ROCm AWQ "
        "path before a dense matmul): per 32 rows x 32 packed int32 columns, each word spread "
        "over eight columns by tl.interleave, nibbles shifted out in AWQ's order, the group's "
        "zero point subtracted and scale applied, stored in fp16"
    ),
    dims=(
        Dim("k", "weight rows (input features)", "rows"),
        Dim("n", "weight columns (output features, eight per packed int32)"),
        Dim("group", "rows of the weight per scale and zero point (128)"),
    ),
    trials=(
        Trial(
            "qwen25_1p5b_o_proj",
            {"k": 1536, "n": 1536, "group": 128},
            "Qwen2.5-1.5B-Instruct-AWQ's attention output projection (1536 -> 1536), "
            "dequantized whole as every decode step does per layer: 288 programs, 2.4 M "
            "values, 5.9 MB moved",
        ),
        Trial(
            "llama8b_gate_up",
            {"k": 4096, "n": 28672, "group": 128},
            "Llama-3.1-8B-Instruct-AWQ's fused gate and up projection (4096 -> 2 x 14336): "
            "14,336 programs, 117 M values, 295 MB moved (235 MB of it the fp16 weight "
            "written)",
        ),
    ),
    backoff_dim="n",
    make_inputs=_make_inputs,
    # block_x spans packed columns (n / 8 of them), block_y the weight's rows
    shape_metrics=lambda d: {"row_len": d["n"] // 8, "rows": d["k"]},
    reference=_reference,
    flops=flops,
    bytes_moved=lambda d: bytes_moved(d, SPEC.dtype),
    # small integers times a scale, rounded once to the output dtype by both the kernel
    # and the reference
    tolerances={"bfloat16": 1e-2, "float16": 1e-3, "float32": 1e-5},
    entry_point="awq_dequantize",
    families=("triton",),
    knobs={"triton": TRITON_KNOBS},
    baselines=_baselines,
    compare_with=("torch",),
    launch_info=_launch_info,
    contexts=CONTEXTS,
    dtype="float16",
)
