"""Liger-Kernel's PolyNorm forward (liger_kernel.ops.poly_norm, 0.8.5), launched by our copy
of Liger's `poly_norm_forward` so that its launch choice is a knob.

One program per row holds the whole row (BLOCK_SIZE = next_pow2(width), masked): it loads
x, forms x^2 and x^3 in the input dtype, takes three fp32 mean squares (of x^3, x^2 and x)
and their rsqrt, stores the three rstd values (fp32, kept for the backward pass) and writes
y = w0 norm(x^3) + w1 norm(x^2) + w2 norm(x) + b.  Liger's choices: BLOCK_SIZE and
num_warps from `calculate_settings` (4 warps, 8 from 2048 columns, 16 from 8192, 32 from
32768), Triton's default stages, eps 1e-6.  The knob is `num_warps` (None: Liger's); the
block must hold the row, so it is not a knob.  The output and the rstd buffer are allocated
in `prepare`.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import torch

from foreign import _common, _libdevice_cpu
from kbopt.bench.interpreter import fix_scalar_index_if_interpreting

LAST_INFO: dict[str, Any] = {}


@dataclass(frozen=True)
class LigerPolyNormConfig:
    num_warps: int | None = None  # None: liger's calculate_settings


def prepare(
    cfg: LigerPolyNormConfig, x: torch.Tensor, w: torch.Tensor, b: torch.Tensor, eps: float
) -> Callable[[], torch.Tensor]:
    fix_scalar_index_if_interpreting()
    from liger_kernel.ops import poly_norm as liger
    from liger_kernel.ops.utils import calculate_settings

    if w.shape != (3,) or b.numel() != 1:
        raise ValueError("PolyNorm takes three weights and one bias")
    shape = x.shape
    x2 = x.reshape(-1, shape[-1])
    if x2.stride(-1) != 1:
        raise ValueError("x must be contiguous in its last dimension")
    n_rows, n_cols = x2.shape
    block, warps = calculate_settings(n_cols)
    warps = cfg.num_warps or warps
    y = torch.empty_like(x2)
    rstd = torch.empty((n_rows, 3), dtype=torch.float32, device=x.device)

    def launch() -> torch.Tensor:
        with (
            _common.interpreter_float_scalars(),
            _common.interpreter_libdevice(liger, rsqrt=_libdevice_cpu.rsqrt),
        ):
            handle = liger._poly_norm_forward_kernel[(n_rows,)](
                y, y.stride(0), x2, x2.stride(0), w, b, rstd, rstd.stride(0), n_cols, eps,
                BLOCK_SIZE=block, num_warps=warps,
            )  # fmt: skip
        _common.record(
            LAST_INFO, handle, kernels=1, kernel_names=["_poly_norm_forward_kernel"],
            block_size=block, num_warps=warps, programs=n_rows,
        )  # fmt: skip
        return y.view(*shape)

    return launch
