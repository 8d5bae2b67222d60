"""FlagGems' matrix-vector product with FlagGems' own configuration: the tuning YAML's first
value of each generated parameter (1 output row per program, 32 columns per step, 4 warps,
3 stages); the output made outside the timed call."""

from __future__ import annotations

from collections.abc import Callable

import torch

from foreign.flaggems_mv.launcher import MvConfig
from foreign.flaggems_mv.launcher import prepare as _prepare

# tune_configs.yaml's mv entry (the generic nvidia file; Hopper's has no mv): block_m's,
# block_n's, warps' and stages' first values (32, 1, 4, 3).  FlagGems' config loader
# generates the entry's 48 configurations from a stack, last value first, and its libtuner
# times them all; triton_v1 takes the lists' first values, as for the other FlagGems specs.
CONFIG = MvConfig(block_m=None, block_n=None, num_warps=None, num_stages=None)


def prepare(weight: torch.Tensor, x: torch.Tensor) -> Callable[[], torch.Tensor]:
    """The output, outside the timed call."""
    return _prepare(CONFIG, weight, x)


def mv(weight: torch.Tensor, x: torch.Tensor) -> torch.Tensor:
    return prepare(weight, x)()
