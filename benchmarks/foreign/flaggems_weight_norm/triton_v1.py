"""FlagGems' weight norm over dim 0 with FlagGems' own configuration: the tuning YAML's first
value of each generated parameter (1 row per program, 512 columns per step, 4 warps, the
loader's 2 stages); the outputs made outside the timed call."""

from __future__ import annotations

from collections.abc import Callable

import torch

from foreign.flaggems_weight_norm.launcher import WeightNormConfig
from foreign.flaggems_weight_norm.launcher import prepare as _prepare

# tune_configs.yaml's weight_norm_kernel_first entry (the generic nvidia file; Hopper's has
# none): block_m's, block_n's and warps' first values (1, 512, 4) and the loader's default
# 2 stages.  FlagGems' config loader generates the entry's 45 configurations from a stack,
# last value first, and its @triton.autotune (dropped at fetch) times them all; triton_v1
# takes the lists' first values, as for the other FlagGems specs.
CONFIG = WeightNormConfig(block_rows=None, block_cols=None, num_warps=None, num_stages=None)


def prepare(v: torch.Tensor, g: torch.Tensor) -> Callable[[], tuple[torch.Tensor, torch.Tensor]]:
    """The outputs, outside the timed call."""
    return _prepare(CONFIG, v, g)


def weight_norm(v: torch.Tensor, g: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    return prepare(v, g)()
