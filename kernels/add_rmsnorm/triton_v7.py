"""triton_v7 — two rows per pipeline step: a [2, hidden] block per loop iteration.

One change from triton_v6: each iteration of the persistent loop normalizes
``rows_per_program`` = 2 rows as one 2-D block (warps sized to the block, so per-thread
state is unchanged): half the loop iterations, half the pipeline waits and barriers per
row, and each cp.async stage moves twice the bytes; the shared-memory ring doubles, so
fewer programs fit per SM.  The count is halved automatically while the grid would fall
below one program per SM (decode: 32 rows stay at one row per program), so coarser blocks
never leave SMs idle (the trap of the anti-pattern ``wave-quantization-from-coarse-tiles``).
No catalog entry covers the amortization itself: "several rows per program for row-wise
kernels" is a candidate entry.
"""

from __future__ import annotations

import torch

from kernels.add_rmsnorm import triton_common as tc
from kernels.add_rmsnorm.triton_common import AddRmsNormConfig

DESCRIPTION = "2 rows per loop iteration (2-D block) in the pipelined persistent loop"

CONFIG = AddRmsNormConfig(
    num_warps=None,
    vectors_per_thread=4,
    rows_per_program=2,
    persistent=True,
    programs_per_sm=None,
    num_stages=3,
    evict=True,
)


def add_rmsnorm(
    x: torch.Tensor, residual: torch.Tensor, weight: torch.Tensor, eps: float
) -> tuple[torch.Tensor, torch.Tensor]:
    return tc.launch(x, residual, weight, eps, CONFIG)
