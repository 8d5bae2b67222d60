"""FlagGems' masked_select with FlagGems' own choice: its wrapper's fixed launch (4096-element
blocks, 16 warps, one program per SM; FlagGems does not autotune it); the count buffer and
the ticket counter made outside the timed call (the counter's zeroing inside)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import torch

from foreign.flaggems_masked_select.launcher import MaskedSelectConfig
from foreign.flaggems_masked_select.launcher import prepare as _prepare

# the constants of FlagGems' masked_select above 4096 elements
CONFIG = MaskedSelectConfig(block_size=None, num_warps=None, programs=None)


def prepare(x: torch.Tensor, mask: torch.Tensor) -> Callable[[], Any]:
    """The per-program counts and the ticket counter, outside the timed call."""
    return _prepare(CONFIG, x, mask)


def masked_select(x: torch.Tensor, mask: torch.Tensor) -> Any:
    return prepare(x, mask)()
