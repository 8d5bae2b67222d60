"""Liger-Kernel's GEGLU forward (liger-kernel 0.8.5, BSD-2-Clause), as kbopt sees it: a
kernel nobody here wrote, imported from the installed `liger_kernel` package (a pure-Triton
wheel, in kbopt's dev extra); nothing of it is copied here.

c = gelu_tanh(a) * b element-wise over the gate and up projections of a Gemma MLP, bf16:
a cubic, a tanh and a handful of multiplies per element.  No matmul: the floor is reading
a and b once and writing c once.
"""

from __future__ import annotations

from collections.abc import Mapping

from foreign import _common
from kbopt.kernel import Dim, KernelSpec, Knob, Trial

_common.require_package(__file__, "liger_kernel", "liger-kernel==0.8.5")

ELEMENT_SIZE = _common.ELEMENT_SIZE
CONTEXTS = ("elementwise", "memory-bound")


def bytes_moved(d: Mapping[str, int], dtype: str = "bfloat16") -> int:
    return ELEMENT_SIZE[dtype] * 3 * d["rows"] * d["hidden"]


_make_inputs = _common.forward_make_inputs("liger_geglu", "rows", "hidden")
_reference = _common.forward_reference("liger_geglu")
_baselines = _common.forward_baselines(
    "liger_geglu",
    (
        "torch",
        "torch",
        "F.gelu(a, approximate='tanh') * b in plain torch (two kernels)",
        "torch_geglu",
    ),
)


_launch_info = _common.triton_launch_info("foreign.liger_geglu.launcher")


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
    name="liger_geglu",
    description="Liger-Kernel's GEGLU forward (0.8.5): gelu_tanh(a) * b over an MLP's intermediate, bf16",
    dims=(
        Dim("rows", "tokens", "rows"),
        Dim("hidden", "intermediate size (columns of a, b and c)", "row_len"),
    ),
    trials=(
        Trial(
            "large",
            {"rows": 8192, "hidden": 24576},
            "a Gemma-7B MLP (intermediate 24576, padded to a 32768 block) over an 8k-token "
            "chunk: 1.2 GB moved",
        ),
        Trial(
            "gemma2_9b",
            {"rows": 8192, "hidden": 14336},
            "a Gemma-2-9B MLP (intermediate 14336, padded to 16384) over an 8k-token chunk: 705 MB",
        ),
    ),
    backoff_dim="rows",
    make_inputs=_make_inputs,
    reference=_reference,
    flops=lambda d: 0,
    bytes_moved=lambda d: bytes_moved(d, SPEC.dtype),
    # gelu in fp32, rounded to the input dtype before the product: two roundings
    tolerances={"bfloat16": 2e-2, "float16": 3e-3, "float32": 1e-5},
    entry_point="geglu",
    families=("triton",),
    knobs={"triton": TRITON_KNOBS},
    baselines=_baselines,
    compare_with=("torch",),
    launch_info=_launch_info,
    contexts=CONTEXTS,
)
