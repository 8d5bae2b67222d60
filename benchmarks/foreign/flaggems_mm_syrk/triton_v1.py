"""FlagGems' A @ A^T (the SYRK path of aten::mm: the lower triangle of tiles, each stored
twice) with FlagGems' own configuration: the tuning YAML's first `mm_self_transpose` entry
(32 x 32 tiles, 32-deep steps, 2 warps, 2 stages); the output made outside the timed
call."""

from __future__ import annotations

from collections.abc import Callable

import torch

from foreign.flaggems_mm_syrk.launcher import MmSyrkConfig
from foreign.flaggems_mm_syrk.launcher import prepare as _prepare

# tune_configs.yaml's mm_self_transpose entry (the generic nvidia file; Hopper's has none)
# lists 73 configurations that FlagGems' libtuner times; triton_v1 takes the first, as for
# the other FlagGems specs.
CONFIG = MmSyrkConfig(block_m=None, block_k=None, num_warps=None, num_stages=None)


def prepare(a: torch.Tensor) -> Callable[[], torch.Tensor]:
    """The output, outside the timed call."""
    return _prepare(CONFIG, a)


def mm_self_transpose(a: torch.Tensor) -> torch.Tensor:
    return prepare(a)()
