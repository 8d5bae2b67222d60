"""FlagGems' dropout forward with FlagGems' own configuration: its heuristic's 1024-counter
BLOCK (4096 elements per program) and 16 warps above 1024 elements, Triton's default
stages; y and the mask made outside the timed call."""

from __future__ import annotations

from collections.abc import Callable

import torch

from foreign.flaggems_dropout.launcher import DropoutConfig
from foreign.flaggems_dropout.launcher import prepare as _prepare

# the nvidia heuristics_config_utils' dropout entry (Hopper's file is empty): BLOCK 1024 and
# 16 warps above 1024 elements; FlagGems passes no stages (Triton's 3)
CONFIG = DropoutConfig(num_warps=None)


def prepare(
    x: torch.Tensor, philox_seed: int, philox_offset: int
) -> Callable[[], tuple[torch.Tensor, torch.Tensor]]:
    """y and the keep mask, outside the timed call."""
    return _prepare(CONFIG, x, philox_seed, philox_offset)


def dropout(
    x: torch.Tensor, philox_seed: int, philox_offset: int
) -> tuple[torch.Tensor, torch.Tensor]:
    return prepare(x, philox_seed, philox_offset)()
