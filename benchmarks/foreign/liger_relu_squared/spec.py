"""Liger-Kernel's squared-ReLU forward (liger-kernel 0.8.5, BSD-2-Clause), as kbopt sees it:
a kernel nobody here wrote, imported from the installed `liger_kernel` package (a
pure-Triton wheel, in kbopt's dev extra); nothing of it is copied here.

The MLP activation of Nemotron-style models (Liger patches HF's `relu2` with it): y =
max(x, 0)^2 per element, one program per whole row padded to a power of two, bf16 in and
out.  Output: y.  No matmul and no reduction: the floor is reading x once and writing y
once.
"""

from __future__ import annotations

from collections.abc import Mapping

from foreign import _common
from kbopt.kernel import Dim, KernelSpec, Knob, Trial

_common.require_package(__file__, "liger_kernel", "liger-kernel==0.8.5")

ELEMENT_SIZE = _common.ELEMENT_SIZE
CONTEXTS = ("elementwise", "memory-bound")


def bytes_moved(d: Mapping[str, int], dtype: str = "bfloat16") -> int:
    return 2 * ELEMENT_SIZE[dtype] * d["rows"] * d["width"]


_make_inputs = _common.forward_make_inputs("liger_relu_squared", "rows", "width")
_reference = _common.forward_reference("liger_relu_squared")
_baselines = _common.forward_baselines(
    "liger_relu_squared",
    (
        "torch",
        "torch",
        "HF's ReLUSquaredActivation in plain torch, input dtype (relu, then square)",
        "torch_relu_squared",
    ),
)


_launch_info = _common.triton_launch_info("foreign.liger_relu_squared.launcher")


TRITON_KNOBS = (
    Knob(
        "num_warps",
        "int",
        (None, 1, 2, 4, 8, 16, 32),
        "warps",
        "warps per program (one whole row); None: Liger's calculate_settings (32 from 32768 "
        "columns of block)",
    ),
)

SPEC = KernelSpec(
    name="liger_relu_squared",
    description=(
        "Liger-Kernel's squared-ReLU forward (0.8.5): max(x, 0)^2, one program per whole row "
        "padded to a power of two, bf16"
    ),
    dims=(
        Dim("rows", "tokens (rows of x)", "rows"),
        Dim("width", "row width (the MLP's intermediate size)", "row_len"),
    ),
    trials=(
        Trial(
            "prefill",
            {"rows": 8192, "width": 24576},
            "the MLP activation of a Nemotron-4-15B-sized layer (6144 hidden, 24576 "
            "intermediate) over an 8k-token prefill chunk: 805 MB moved, each row padded to a "
            "32768 block (75% of its lanes used) of 32 warps",
        ),
        Trial(
            "decode",
            {"rows": 64, "width": 24576},
            "the same layer at a decode step of 64 sequences: 6.3 MB in 64 programs on 132 SMs",
        ),
    ),
    backoff_dim="rows",
    make_inputs=_make_inputs,
    reference=_reference,
    flops=lambda d: 0,
    bytes_moved=lambda d: bytes_moved(d, SPEC.dtype),
    # the square in the dtype: one rounding, as the reference's cast
    tolerances={"bfloat16": 1e-2, "float16": 2e-3, "float32": 1e-6},
    entry_point="relu_squared",
    families=("triton",),
    knobs={"triton": TRITON_KNOBS},
    baselines=_baselines,
    compare_with=("torch",),
    launch_info=_launch_info,
    contexts=CONTEXTS,
)
