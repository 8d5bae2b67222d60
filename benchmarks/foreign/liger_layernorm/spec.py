"""Liger-Kernel's LayerNorm forward (liger-kernel 0.8.5, BSD-2-Clause), as kbopt sees it: a
kernel nobody here wrote, imported from the installed `liger_kernel` package (a pure-Triton
wheel, in kbopt's dev extra); nothing of it is copied here.

y = (x - mean) * rstd * w + b per row with fp32 statistics, bf16 in and out.  No matmul:
the floor is reading x, w and b once and writing y once (Liger's fp32 mean and rstd per
row, 8 bytes, are left out).
"""

from __future__ import annotations

from collections.abc import Mapping

from foreign import _common
from kbopt.kernel import Dim, KernelSpec, Knob, Trial

_common.require_package(__file__, "liger_kernel", "liger-kernel==0.8.5")

ELEMENT_SIZE = _common.ELEMENT_SIZE
CONTEXTS = ("normalization", "reduction", "memory-bound")


def bytes_moved(d: Mapping[str, int], dtype: str = "bfloat16") -> int:
    return ELEMENT_SIZE[dtype] * (2 * d["rows"] * d["hidden"] + 2 * d["hidden"])


_make_inputs = _common.forward_make_inputs("liger_layernorm", "rows", "hidden")
_reference = _common.forward_reference("liger_layernorm")
_baselines = _common.forward_baselines(
    "liger_layernorm",
    ("torch", "torch", "F.layer_norm (torch's own kernel)", "torch_layer_norm"),
)


_launch_info = _common.triton_launch_info("foreign.liger_layernorm.launcher")


TRITON_KNOBS = (
    Knob(
        "num_warps",
        "int",
        (None, 1, 2, 4, 8, 16, 32),
        "warps",
        "warps per program (one whole row); None: Liger's calculate_settings (from the row width)",
    ),
)

SPEC = KernelSpec(
    name="liger_layernorm",
    description="Liger-Kernel's LayerNorm forward (0.8.5): fp32 statistics, one row per program, bf16",
    dims=(
        Dim("rows", "tokens (rows of x)", "rows"),
        Dim("hidden", "hidden size (the normalized dimension)", "row_len"),
    ),
    trials=(
        Trial(
            "large",
            {"rows": 8192, "hidden": 8192},
            "a 70B-class layer (hidden 8192) over an 8k-token prefill chunk: 268 MB moved, "
            "bandwidth-bound",
        ),
        Trial(
            "narrow",
            {"rows": 65536, "hidden": 1024},
            "a ViT-L/BERT-large-width layer (hidden 1024) over 64k tokens: the same bytes in "
            "8x more, shorter rows, per-row overhead shows",
        ),
    ),
    backoff_dim="rows",
    make_inputs=_make_inputs,
    reference=_reference,
    flops=lambda d: 0,
    bytes_moved=lambda d: bytes_moved(d, SPEC.dtype),
    # fp32 statistics and one rounding of y: bf16 ~4e-3 relative, fp16 ~5e-4
    tolerances={"bfloat16": 1e-2, "float16": 2e-3, "float32": 1e-5},
    entry_point="layer_norm",
    families=("triton",),
    knobs={"triton": TRITON_KNOBS},
    baselines=_baselines,
    compare_with=("torch",),
    launch_info=_launch_info,
    contexts=CONTEXTS,
)
