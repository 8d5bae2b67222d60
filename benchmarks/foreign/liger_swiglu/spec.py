"""Liger-Kernel's SwiGLU forward (liger-kernel 0.8.5, BSD-2-Clause), as kbopt sees it: a
kernel nobody here wrote, imported from the installed `liger_kernel` package (a pure-Triton
wheel, in kbopt's dev extra); nothing of it is copied here.

c = silu(a) * b element-wise over the gate and up projections of an LLM MLP, bf16.  No
matmul: the floor is reading a and b once and writing c once.
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


_make_inputs = _common.forward_make_inputs("liger_swiglu", "rows", "hidden")
_reference = _common.forward_reference("liger_swiglu")
_baselines = _common.forward_baselines(
    "liger_swiglu",
    ("torch", "torch", "F.silu(a) * b in plain torch (two kernels)", "torch_swiglu"),
)


_launch_info = _common.triton_launch_info("foreign.liger_swiglu.launcher")


TRITON_KNOBS = (
    Knob(
        "num_warps",
        "int",
        (None, 1, 2, 4, 8, 16, 32),
        "warps",
        "warps per program; None: Liger's calculate_settings (from the row width)",
    ),
    Knob(
        "block_size",
        "int",
        (None, 256, 512, 1024, 2048, 4096),
        "tile_n",
        "None: Liger's whole-row kernel; a width: its tiled kernel (2-D grid) with that tile",
    ),
)

SPEC = KernelSpec(
    name="liger_swiglu",
    description="Liger-Kernel's SwiGLU forward (0.8.5): silu(a) * b over an MLP's intermediate, bf16",
    dims=(
        Dim("rows", "tokens", "rows"),
        Dim("hidden", "intermediate size (columns of a, b and c)", "row_len"),
    ),
    trials=(
        Trial(
            "large",
            {"rows": 8192, "hidden": 14336},
            "a Llama-3-8B MLP (intermediate 14336) over an 8k-token chunk: 705 MB moved",
        ),
        Trial(
            "decode",
            {"rows": 32, "hidden": 14336},
            "one decode step of 32 tokens: 2.8 MB, 32 programs on 132 SMs, launch-bound",
        ),
    ),
    backoff_dim="rows",
    make_inputs=_make_inputs,
    reference=_reference,
    flops=lambda d: 0,
    bytes_moved=lambda d: bytes_moved(d, SPEC.dtype),
    # silu in fp32, silu(a) rounded to the input dtype before the product: two roundings
    tolerances={"bfloat16": 2e-2, "float16": 3e-3, "float32": 1e-5},
    entry_point="swiglu",
    families=("triton",),
    knobs={"triton": TRITON_KNOBS},
    baselines=_baselines,
    compare_with=("torch",),
    launch_info=_launch_info,
    contexts=CONTEXTS,
)
