"""triton_v9 — triton_v1 with block 256 -> 512 (tile_n x2) (catalog move of keep-enough-bytes-in-flight).

A copy of triton_v1 with only knob values changed (the catalog designer); triton_v1's notes follow.

triton_v1 — naive: one program per row, two passes over global memory.

The starting point of the ladder (no catalog entry applied).  Each program loops over its
row in ``block``-wide chunks (256 columns, 4 warps: two elements per thread, so no access
is wider than 4 bytes): pass 1 loads x and residual, stores residual_out and accumulates
the fp32 sum of squares; pass 2 re-loads residual_out from global memory, normalizes it
and stores y.  residual_out crosses DRAM three times instead of once, and y is computed
from the bf16-rounded sum (as vLLM's kernel does), not from the fp32 one.
"""

from __future__ import annotations

import torch

from kernels.add_rmsnorm import triton_common as tc
from kernels.add_rmsnorm.triton_common import AddRmsNormConfig

DESCRIPTION = 'triton_v1 with block 256 -> 512 (tile_n x2) (catalog move of keep-enough-bytes-in-flight)'

CONFIG = AddRmsNormConfig(block=512, num_warps=4)


def add_rmsnorm(
    x: torch.Tensor, residual: torch.Tensor, weight: torch.Tensor, eps: float
) -> tuple[torch.Tensor, torch.Tensor]:
    return tc.launch_two_pass(x, residual, weight, eps, CONFIG)
