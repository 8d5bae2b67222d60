"""DyT (Dynamic Tanh) as kbopt sees it: dims, trial points, reference, roofline, versions.

``y = tanh(alpha * x) * gamma + beta`` over ``x [rows, hidden]``, bf16 in and out, fp32
inside (`reference.py`).  No matmul and no reduction: the floor is reading x once and
writing y once (alpha, gamma and beta are one row).  The versions differ in how tanh is
computed, which decides whether the kernel reaches that floor or is limited by issuing
instructions (`triton_common.py`).  torch and triton are imported inside the functions
below, so the spec loads on a machine without them.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from kbopt.kernel import Dim, KernelSpec, Knob, Trial, Version

ELEMENT_SIZE = {"float32": 4, "float16": 2, "bfloat16": 2}


def bytes_moved(d: Mapping[str, int], dtype: str = "bfloat16") -> int:
    """Fewest DRAM bytes of one call: x read and y written once, gamma and beta once."""
    return ELEMENT_SIZE[dtype] * (2 * d["rows"] * d["hidden"] + 2 * d["hidden"] + 1)


def _make_inputs(
    dims: Mapping[str, int], *, dtype: Any, device: str, seed: int | None = None
) -> tuple[Any, ...]:
    from kernels.dyt import reference

    return reference.make_inputs(dims, dtype=dtype, device=device, seed=seed)


def _reference(*inputs: Any) -> Any:
    from kernels.dyt import reference

    return reference.reference(*inputs)


def _baselines() -> dict[str, Version]:
    from kernels.dyt import reference

    return {
        "torch": Version(
            "torch",
            "torch",
            "the layer in plain torch, in the input dtype (tanh, mul, mul, add kernels)",
            reference.torch_eager,
        )
    }


def _launch_info(family: str) -> dict[str, Any]:
    if family == "triton":
        from kernels.dyt import triton_common

        return triton_common.LAST_INFO
    return {}


TRITON_KNOBS = (
    Knob(
        "block_n",
        "int",
        (256, 512, 1024, 2048, 4096, 8192),
        "tile_n",
        "columns of a row per program",
    ),
    Knob("num_warps", "int", (1, 2, 4, 8, 16), "warps", "warps per program"),
)

SPEC = KernelSpec(
    name="dyt",
    description=(
        "DyT, the element-wise replacement for a transformer's norm: y = tanh(alpha x) * "
        "gamma + beta, bf16 in and out, fp32 inside"
    ),
    contexts=("elementwise", "memory-bound"),
    dims=(
        Dim("rows", "tokens (rows of x)", "rows"),
        Dim("hidden", "hidden size (channels of gamma and beta)", "row_len"),
    ),
    trials=(
        Trial(
            "prefill_70b",
            {"rows": 4096, "hidden": 8192},
            "a Llama-3-70B-sized layer with DyT in place of its norm over a 4k-token prefill "
            "chunk: 134 MB moved, beyond the L2",
        ),
        Trial(
            "prefill_8b",
            {"rows": 8192, "hidden": 4096},
            "a Llama-3-8B-sized layer over an 8k-token chunk: the same bytes in narrower rows",
        ),
    ),
    backoff_dim="rows",
    make_inputs=_make_inputs,
    reference=_reference,
    flops=lambda d: 0,
    bytes_moved=lambda d: bytes_moved(d, SPEC.dtype),
    # one rounding of y; the hardware tanh adds about 1e-5 relative, far under bf16's 4e-3
    tolerances={"bfloat16": 1e-2, "float16": 2e-3, "float32": 1e-5},
    entry_point="dyt",
    families=("triton",),
    knobs={"triton": TRITON_KNOBS},
    baselines=_baselines,
    compare_with=("torch",),
    launch_info=_launch_info,
)
