"""FlagGems' MLA decode kernel with FlagGems' Hopper launch: 64 query heads per program, 64
KV rows per step, 8 warps, 3 stages."""

from __future__ import annotations

from collections.abc import Callable

import torch

from foreign.flaggems_flash_mla.launcher import FlashMlaConfig
from foreign.flaggems_flash_mla.launcher import prepare as _prepare

CONFIG = FlashMlaConfig(block_h=None, block_n=None, num_warps=None, num_stages=None)


def prepare(
    q: torch.Tensor, kv_cache: torch.Tensor, block_table: torch.Tensor, seqlens: torch.Tensor
) -> Callable[[], torch.Tensor]:
    """The output buffer, outside the timed call."""
    return _prepare(CONFIG, q, kv_cache, block_table, seqlens)


def flash_mla(
    q: torch.Tensor, kv_cache: torch.Tensor, block_table: torch.Tensor, seqlens: torch.Tensor
) -> torch.Tensor:
    return prepare(q, kv_cache, block_table, seqlens)()
