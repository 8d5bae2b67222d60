"""FlagGems' repeat_interleave of a repeats tensor with FlagGems' own choice: the fixed
launch of its `repeat_interleave_tensor` (32 elements per loop step, 1 warp, one program
per entry; FlagGems does not autotune it); the running totals and the output made outside
the timed call."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import torch

from foreign.flaggems_repeat_interleave.launcher import RepeatInterleaveConfig
from foreign.flaggems_repeat_interleave.launcher import prepare as _prepare

# the constants of FlagGems' repeat_interleave_tensor (no tuning YAML entry for it)
CONFIG = RepeatInterleaveConfig(block_size=None, num_warps=None)


def prepare(counts: torch.Tensor) -> Callable[[], Any]:
    """The running totals, the row count and the output, outside the timed call."""
    return _prepare(CONFIG, counts)


def repeat_interleave(counts: torch.Tensor) -> Any:
    return prepare(counts)()
