"""triton_v4 — persistent grid: one wave of programs striding over the rows.

One change from triton_v3: instead of one program per row (thousands of programs launched
wave after wave, the last wave partly empty), the grid is exactly one full wave: as many
programs as fit resident on every SM at once (from the compiled kernel's registers per
thread, threads per program and shared memory), each looping over rows with a grid
stride.  The weight row is loaded once per program and stays in registers across all its
rows, and no program is launched after the first wave (catalog entry
``stream-k-persistent-scheduling``: persistent workers with an even share of the work;
rows are small and uniform, so no Stream-K split of a row is needed).  Alone, this
serializes each program's load -> reduce -> store; triton_v5 overlaps them.
"""

from __future__ import annotations

import torch

from kernels.add_rmsnorm import triton_common as tc
from kernels.add_rmsnorm.triton_common import AddRmsNormConfig

DESCRIPTION = "persistent: one occupancy-sized wave of programs striding over the rows"

CONFIG = AddRmsNormConfig(
    num_warps=None,
    vectors_per_thread=4,
    persistent=True,
    programs_per_sm=None,
)


def add_rmsnorm(
    x: torch.Tensor, residual: torch.Tensor, weight: torch.Tensor, eps: float
) -> tuple[torch.Tensor, torch.Tensor]:
    return tc.launch(x, residual, weight, eps, CONFIG)
