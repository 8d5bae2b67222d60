"""triton_v4 — triton_v3 with block_n 64 -> 32 (tile_n /2) (catalog move of wave-quantization-from-coarse-tiles).

A copy of triton_v3 with only knob values changed (the catalog designer); triton_v3's notes follow.

triton_v3 — triton_v2 with block_n 128 -> 64 (tile_n /2) (catalog move of wave-quantization-from-coarse-tiles).

A copy of triton_v2 with only knob values changed (the catalog designer); triton_v2's notes follow.

triton_v2 — triton_v1 with block_n 256 -> 128 (tile_n /2) (catalog move of wave-quantization-from-coarse-tiles).

A copy of triton_v1 with only knob values changed (the catalog designer); triton_v1's notes follow.

Liger-Kernel's int8 x int2 (ternary) matmul at the first configuration of Liger's autotune
list, pinned: 128 x 256 output tiles, 64-deep int8 tl.dot steps, row-tiles grouped by 8,
8 warps, 3 stages (no autotuning).
"""

from __future__ import annotations

from collections.abc import Callable

import torch

from foreign.liger_mm_int8int2.launcher import LigerMmInt8Int2Config
from foreign.liger_mm_int8int2.launcher import prepare as _prepare

CONFIG = LigerMmInt8Int2Config(
    block_m=128, block_n=32, block_k=64, group_m=8, num_warps=8, num_stages=3
)


def prepare(a: torch.Tensor, packed: torch.Tensor) -> Callable[[], torch.Tensor]:
    """The int32 output and the grid, outside the timed call."""
    return _prepare(CONFIG, a, packed)


def mm_int8int2(a: torch.Tensor, packed: torch.Tensor) -> torch.Tensor:
    return prepare(a, packed)()
