"""FlagGems' RWKV sparse matrix product with FlagGems' own configuration: 512 rows of v per
step, 16 output columns per program (the wrapper's fixed values) and Triton's default 4
warps and 3 stages (FlagGems passes none; no autotune); the output made outside the timed
call."""

from __future__ import annotations

from collections.abc import Callable

import torch

from foreign.flaggems_rwkv_mm_sparsity.launcher import RwkvMmSparsityConfig
from foreign.flaggems_rwkv_mm_sparsity.launcher import prepare as _prepare

# rwkv_mm_sparsity's wrapper: blk_size = triton.next_power_of_2(512), block_size =
# triton.next_power_of_2(16), no num_warps or num_stages, no autotune.
CONFIG = RwkvMmSparsityConfig(blk_size=None, block_size=None, num_warps=None, num_stages=None)


def prepare(k: torch.Tensor, v: torch.Tensor) -> Callable[[], torch.Tensor]:
    """The output, outside the timed call."""
    return _prepare(CONFIG, k, v)


def rwkv_mm_sparsity(k: torch.Tensor, v: torch.Tensor) -> torch.Tensor:
    return prepare(k, v)()
