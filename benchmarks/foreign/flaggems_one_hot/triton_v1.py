"""FlagGems' one_hot with FlagGems' own launch: 32 rows per program, the classes' next power
of two capped at 128 per step, Triton's default 4 warps; the output made outside the timed
call."""

from __future__ import annotations

from collections.abc import Callable

import torch

from foreign.flaggems_one_hot.launcher import OneHotConfig
from foreign.flaggems_one_hot.launcher import prepare as _prepare

# one_hot.py's wrapper: BLOCK_M = 32, BLOCK_N = min(triton.next_power_of_2(num_classes), 128),
# no num_warps (Triton's default 4); no autotuning.
CONFIG = OneHotConfig(block_m=None, block_n=None, num_warps=None)


def prepare(ids: torch.Tensor, classes: int) -> Callable[[], torch.Tensor]:
    """The output, outside the timed call."""
    return _prepare(CONFIG, ids, classes)


def one_hot(ids: torch.Tensor, classes: int) -> torch.Tensor:
    return prepare(ids, classes)()
