"""Liger-Kernel's PolyNorm forward (liger-kernel 0.8.5, BSD-2-Clause), as kbopt sees it: a
kernel nobody here wrote, imported from the installed `liger_kernel` package (a pure-Triton
wheel, in kbopt's dev extra); nothing of it is copied here.

PolyNorm, the activation of a PolyCom MLP: y = w0 norm(x^3) + w1 norm(x^2) + w2 norm(x) + b
over each row, with three RMS statistics per row (fp32) instead of one, bf16 in and out.
Output: y.  No matmul: the floor is reading x once and writing y once (Liger's three fp32
rstd values per row, 12 bytes, are left out).
"""

from __future__ import annotations

from collections.abc import Mapping

from foreign import _common
from kbopt.kernel import Dim, KernelSpec, Knob, Trial

_common.require_package(__file__, "liger_kernel", "liger-kernel==0.8.5")

ELEMENT_SIZE = _common.ELEMENT_SIZE
CONTEXTS = ("normalization", "reduction", "memory-bound")


def bytes_moved(d: Mapping[str, int], dtype: str = "bfloat16") -> int:
    return ELEMENT_SIZE[dtype] * (2 * d["rows"] * d["width"] + 4)


_make_inputs = _common.forward_make_inputs("liger_poly_norm", "rows", "width")
_reference = _common.forward_reference("liger_poly_norm")
_baselines = _common.forward_baselines(
    "liger_poly_norm",
    (
        "torch",
        "torch",
        "PolyCom's PolyNorm module in plain torch, input dtype (powers, three RMS norms, sums)",
        "torch_poly_norm",
    ),
)


_launch_info = _common.triton_launch_info("foreign.liger_poly_norm.launcher")


TRITON_KNOBS = (
    Knob(
        "num_warps",
        "int",
        (None, 1, 2, 4, 8, 16, 32),
        "warps",
        "warps per program (one whole row); None: Liger's calculate_settings (16 at 8192 to "
        "16384 columns)",
    ),
)

SPEC = KernelSpec(
    name="liger_poly_norm",
    description=(
        "Liger-Kernel's PolyNorm forward (0.8.5): three RMS statistics per row (x^3, x^2, x) "
        "and their weighted sum, one program per whole row, bf16"
    ),
    dims=(
        Dim("rows", "tokens (rows of x)", "rows"),
        Dim(
            "width", "row width (the MLP's intermediate size, the normalized dimension)", "row_len"
        ),
    ),
    trials=(
        Trial(
            "prefill",
            {"rows": 8192, "width": 14336},
            "PolyNorm as the MLP activation at a Llama-3-8B-sized intermediate (14336) over an "
            "8k-token prefill chunk: 470 MB moved, each row padded to a 16384 block of 16 warps",
        ),
        Trial(
            "decode",
            {"rows": 64, "width": 14336},
            "the same layer at a decode step of 64 sequences: 3.7 MB in 64 programs on 132 SMs",
        ),
    ),
    backoff_dim="rows",
    make_inputs=_make_inputs,
    reference=_reference,
    flops=lambda d: 0,
    bytes_moved=lambda d: bytes_moved(d, SPEC.dtype),
    # x^2 and x^3 formed in the dtype (two roundings), statistics in fp32, y rounded once
    tolerances={"bfloat16": 2e-2, "float16": 3e-3, "float32": 1e-5},
    entry_point="poly_norm",
    families=("triton",),
    knobs={"triton": TRITON_KNOBS},
    baselines=_baselines,
    compare_with=("torch",),
    launch_info=_launch_info,
    contexts=CONTEXTS,
)
