"""Liger-Kernel's DyT forward (liger-kernel 0.8.5, BSD-2-Clause), as kbopt sees it: a kernel
nobody here wrote, imported from the installed `liger_kernel` package (a pure-Triton wheel,
in kbopt's dev extra); nothing of it is copied here.

Dynamic Tanh, the element-wise replacement for a transformer's norm layers: y = tanh(alpha
x) * gamma + beta with a scalar alpha and per-channel gamma and beta, bf16 in and out, the
launch chosen by Liger's autotuner.  No matmul and no reduction: the floor is reading x
once and writing y once (gamma, beta and alpha are one row).
"""

from __future__ import annotations

from collections.abc import Mapping

from foreign import _common
from kbopt.kernel import Dim, KernelSpec, Knob, Trial

_common.require_package(__file__, "liger_kernel", "liger-kernel==0.8.5")

ELEMENT_SIZE = _common.ELEMENT_SIZE
CONTEXTS = ("elementwise", "memory-bound", "autotuning")


def bytes_moved(d: Mapping[str, int], dtype: str = "bfloat16") -> int:
    return ELEMENT_SIZE[dtype] * (2 * d["rows"] * d["hidden"] + 2 * d["hidden"] + 1)


_make_inputs = _common.forward_make_inputs("liger_dyt", "rows", "hidden")
_reference = _common.forward_reference("liger_dyt")
_baselines = _common.forward_baselines(
    "liger_dyt",
    (
        "torch",
        "torch",
        "the paper's DyT module in plain torch, input dtype (tanh, mul, mul, add kernels)",
        "torch_dyt",
    ),
)


_launch_info = _common.triton_launch_info("foreign.liger_dyt.launcher")


TRITON_KNOBS = (
    Knob(
        "block_n",
        "int",
        (None, 256, 512, 1024, 2048, 4096, 8192),
        "tile_n",
        "columns of a row per program; None: Liger's autotuner picks (1024, 2048 or 4096)",
    ),
    Knob(
        "num_stages",
        "int",
        (None, 1, 2, 3, 4),
        "pipeline_stages",
        "software-pipeline stages; None: Liger's autotuner picks (1 or 2)",
    ),
    Knob(
        "num_warps",
        "int",
        (None, 1, 2, 4, 8, 16, 32),
        "warps",
        "warps per program; None: Liger's autotuner picks (4, 8 or 16)",
    ),
)

SPEC = KernelSpec(
    name="liger_dyt",
    description=(
        "Liger-Kernel's DyT forward (0.8.5): tanh(alpha x) * gamma + beta, a 2-D grid of "
        "column blocks by rows, autotuned launch, bf16"
    ),
    dims=(
        Dim("rows", "tokens (rows of x)", "rows"),
        Dim("hidden", "hidden size (channels of gamma and beta)", "row_len"),
    ),
    trials=(
        Trial(
            "prefill_70b",
            {"rows": 4096, "hidden": 8192},
            "a Llama-3-70B-sized layer with DyT in place of RMSNorm over a 4k-token prefill "
            "chunk: 134 MB moved, bandwidth-bound",
        ),
        Trial(
            "decode",
            {"rows": 32, "hidden": 4096},
            "a Llama-3-8B-sized decode step of 32 sequences: 0.5 MB in 32 to 128 programs on "
            "132 SMs, launch-bound",
        ),
    ),
    backoff_dim="rows",
    make_inputs=_make_inputs,
    reference=_reference,
    flops=lambda d: 0,
    bytes_moved=lambda d: bytes_moved(d, SPEC.dtype),
    # fp32 inside, one rounding of y (the CPU tests' tanh stand-in adds ~1e-7 in fp32)
    tolerances={"bfloat16": 1e-2, "float16": 2e-3, "float32": 1e-5},
    entry_point="dyt",
    families=("triton",),
    knobs={"triton": TRITON_KNOBS},
    baselines=_baselines,
    compare_with=("torch",),
    launch_info=_launch_info,
    contexts=CONTEXTS,
)
