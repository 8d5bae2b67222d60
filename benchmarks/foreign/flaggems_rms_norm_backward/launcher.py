"""FlagGems' RMSNorm backward (src/flag_gems/ops/rms_norm.py, v5.0.2:
`rms_norm_grad_dx_kernel` and `rms_norm_grad_dw_kernel`), launched as FlagGems'
`rms_norm_backward` launches them (the backward of its `RmsNorm` autograd function), so
that their launch choices are knobs.

The first launch is the input gradient: one program per row loads the whole row of x and
of dy and the whole weight in one next_power_of_2(hidden)-wide block (masked past hidden),
forms g = dy * w and x_hat = x * inv_rms in fp32 from the forward's saved fp32 inv_rms,
sums g * x_hat over the row, and stores dx = (g - x_hat * sum / hidden) * inv_rms.  No
loop: the row lives in registers (at hidden 8192 and 4 warps, 64 elements of each of x, dy
and w per thread).  The second is the weight gradient's partial sums: one program per
ROW_BLOCK_SIZE x COL_BLOCK_SIZE tile of x and dy sums x * dy * inv_rms over its rows into
one fp32 row of a [cdiv(rows, ROW_BLOCK_SIZE), hidden] partial buffer; torch then sums the
buffer over its rows in fp32 (`torch.sum(..., dtype=torch.float32)`) and casts to x's dtype.

FlagGems' launch: fixed, no tuner.  dx: BLOCK_SIZE = next_power_of_2(hidden) (not a knob:
the kernel needs the whole row in one block), Triton's default 4 warps and 3 stages (none
passed).  dw: ROW_BLOCK_SIZE 16, COL_BLOCK_SIZE 256, Triton's default 4 warps and 3 stages.
Neither kernel has a loop, so the stages change nothing and are not a knob.  Knobs:
`dx_warps`, `dw_block_rows`, `dw_block_cols`, `dw_warps`, None keeping FlagGems'.  FlagGems
allocates dx and the partial buffer per call; here both are made in `prepare` (the torch
sum and cast, which make dw, stay in the timed call).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import torch
import triton

from foreign import _common

LAST_INFO: dict[str, Any] = {}
EPS = 1e-5  # passed as rms_norm_backward passes its eps; neither kernel reads it
# rms_norm_backward's fixed ROW_BLOCK_SIZE and COL_BLOCK_SIZE, and Triton's default warps
# (FlagGems passes none to either launch)
FLAGGEMS = {"dx_warps": 4, "dw_block_rows": 16, "dw_block_cols": 256, "dw_warps": 4}


@dataclass(frozen=True)
class RmsNormBackwardConfig:
    dx_warps: int | None = None  # None: Triton's default 4 (FlagGems passes none)
    dw_block_rows: int | None = None  # None: FlagGems' ROW_BLOCK_SIZE, 16 rows per partial
    dw_block_cols: int | None = None  # None: FlagGems' COL_BLOCK_SIZE, 256 columns a program
    dw_warps: int | None = None  # None: Triton's default 4


def prepare(
    cfg: RmsNormBackwardConfig, dy: torch.Tensor, x: torch.Tensor, inv_rms: torch.Tensor,
    weight: torch.Tensor,
) -> Callable[[], tuple[torch.Tensor, torch.Tensor]]:  # fmt: skip
    mod = _common.load_source("flaggems_rms_norm_backward")
    if x.dim() != 2 or dy.shape != x.shape:
        raise ValueError("dy and x must be [rows, hidden] matrices of the same shape")
    m, n = x.shape
    if weight.shape != (n,) or inv_rms.shape != (m,):
        raise ValueError("weight must be [hidden] and inv_rms [rows]")
    # FlagGems makes x, dy and the weight contiguous first (a no-op here)
    x, dy, weight = x.contiguous(), dy.contiguous(), weight.contiguous()
    knob = {f: getattr(cfg, f) or FLAGGEMS[f] for f in FLAGGEMS}
    block = triton.next_power_of_2(n)
    rows, cols = knob["dw_block_rows"], knob["dw_block_cols"]
    dx = torch.empty_like(x)
    grid_dw = (triton.cdiv(m, rows), triton.cdiv(n, cols))
    partial = torch.empty((grid_dw[0], n), dtype=torch.float32, device=x.device)
    names = ["rms_norm_grad_dx_kernel", "rms_norm_grad_dw_kernel", "sum"]
    if x.dtype != torch.float32:
        names.append("to")

    def launch() -> tuple[torch.Tensor, torch.Tensor]:
        h1 = mod.rms_norm_grad_dx_kernel[(m,)](
            x, dy, inv_rms, dx, weight, n, 1, n, 1, n, EPS, block,
            num_warps=knob["dx_warps"],
        )  # fmt: skip
        h2 = mod.rms_norm_grad_dw_kernel[grid_dw](
            x, dy, inv_rms, partial, n, 1, n, 1, m, n, rows, cols, num_warps=knob["dw_warps"]
        )
        dw = torch.sum(partial, dim=0, dtype=torch.float32).to(x.dtype).reshape(-1)
        _common.record(
            LAST_INFO, h1, kernels=len(names), kernel_names=names,
            programs=m + grid_dw[0] * grid_dw[1], dx_programs=m,
            dw_programs=grid_dw[0] * grid_dw[1], dx_block=block, partial_rows=grid_dw[0],
            **knob,
        )  # fmt: skip
        del h2
        return dx, dw

    return launch
