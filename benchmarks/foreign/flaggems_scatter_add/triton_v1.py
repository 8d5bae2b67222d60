"""FlagGems' scatter_add_ along the last dimension with FlagGems' own choice: the fixed
launch of its `scatter_add_1` (256-element blocks, one per program, Triton's default 4
warps; FlagGems does not autotune it); the totals zeroed in the timed call."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import torch

from foreign.flaggems_scatter_add.launcher import ScatterAddConfig
from foreign.flaggems_scatter_add.launcher import prepare as _prepare

# the constants of FlagGems' scatter_add_1 (BLOCK_SIZE=256, LOOP=1; no tuning YAML entry)
CONFIG = ScatterAddConfig(block_size=None, num_warps=None)


def prepare(expert_ids: torch.Tensor, weights: torch.Tensor, experts: int) -> Callable[[], Any]:
    """The fp32 totals allocated outside the timed call (zeroed inside it)."""
    return _prepare(CONFIG, expert_ids, weights, experts)


def scatter_add(expert_ids: torch.Tensor, weights: torch.Tensor, experts: int) -> Any:
    return prepare(expert_ids, weights, experts)()
