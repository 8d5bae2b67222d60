"""FlagGems' radix sort with FlagGems' own choice: the constants its `radix_sort` fixes (4
bits per pass; 1024-column histogram tiles, 8 per program, 16 bins per step; 2048-column
sweep tiles of 8 bins; Triton's default 4 warps); the column ids, buffers, digit table and
status words made outside the timed call."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import torch

from foreign.flaggems_radix_sort.launcher import RadixSortConfig
from foreign.flaggems_radix_sort.launcher import prepare as _prepare

# FlagGems does not autotune the sort: these are the constants written in radix_sort
CONFIG = RadixSortConfig(
    bits_per_pass=None, hist_tile_n=None, hist_tiles_per_program=None, hist_tile_r=None,
    sweep_tile_n=None, sweep_tile_r=None, num_warps=None, sweep_warps=None,
)  # fmt: skip


def prepare(x: torch.Tensor) -> Callable[[], Any]:
    """The column ids, ping-pong buffers, digit table and status words, outside the timed
    call."""
    return _prepare(CONFIG, x)


def radix_sort(x: torch.Tensor) -> Any:
    return prepare(x)()
