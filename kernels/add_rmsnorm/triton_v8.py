"""triton_v8 — two rows per program, from triton_v3, without the persistent loop.

The persistent versions (triton_v4 to triton_v7) were slower than triton_v3 on the H200
(kernels/add_rmsnorm/results/20261202T181323Z-NVIDIA-H200.json: 74.8 us against 69.4 us
at rows=8192, hidden=4096): with the whole row in registers, a resident program holds
~124 registers per thread, occupancy falls to 25%, and the strict load-reduce-store
sequence of one program is no longer hidden by the others.  So this version keeps
triton_v3's one-block-per-program grid and changes one thing: each program normalizes
``rows_per_program`` = 2 rows as one [2, hidden] block, with warps sized to the block
(4 x 16-byte vectors per thread and tensor, as in triton_v3: 8 warps at hidden=4096, 16 at
8192).  Half as many programs, the weight row loaded once per two rows, and twice the
bytes in flight per program.  The knob sweep that motivated it is in
kernels/add_rmsnorm/results/tune-xlarge-20261202T1818Z-NVIDIA-H200.json (16 warps, 2 rows:
516.5 us against 523.9 us for triton_v3's launch at rows=32768, hidden=8192).  The row
count is halved automatically while the grid would have fewer programs than SMs (decode).
No catalog entry covers "several rows per program" for row-wise kernels yet.
"""

from __future__ import annotations

import torch

from kernels.add_rmsnorm import triton_common as tc
from kernels.add_rmsnorm.triton_common import AddRmsNormConfig

DESCRIPTION = "2 rows per program ([2, hidden] block), warps sized to the block, no persistent loop"

CONFIG = AddRmsNormConfig(num_warps=None, vectors_per_thread=4, rows_per_program=2)


def add_rmsnorm(
    x: torch.Tensor, residual: torch.Tensor, weight: torch.Tensor, eps: float
) -> tuple[torch.Tensor, torch.Tensor]:
    return tc.launch(x, residual, weight, eps, CONFIG)
