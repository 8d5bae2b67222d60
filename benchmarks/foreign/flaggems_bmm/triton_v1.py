"""FlagGems' batched GEMM with FlagGems' own configuration: the tuning YAML's first `bmm`
entry (32 x 32 output tiles, 32-deep tl.dot steps, GROUP_M 1, 4 warps, 2 stages); the
output buffer made outside the timed call."""

from __future__ import annotations

from collections.abc import Callable

import torch

from foreign.flaggems_bmm.launcher import BmmConfig
from foreign.flaggems_bmm.launcher import prepare as _prepare

# tune_configs.yaml's bmm entry (the generic nvidia file; Hopper's has none) lists twelve
# configurations that FlagGems' libtuner times; triton_v1 takes the first, as for the other
# FlagGems specs.
CONFIG = BmmConfig(
    tile_m=None, tile_n=None, tile_k=None, group_m=None, num_warps=None, num_stages=None
)


def prepare(x: torch.Tensor, w_uv: torch.Tensor) -> Callable[[], torch.Tensor]:
    """The output buffer, outside the timed call."""
    return _prepare(CONFIG, x, w_uv)


def mla_v_up_proj(x: torch.Tensor, w_uv: torch.Tensor) -> torch.Tensor:
    return prepare(x, w_uv)()
