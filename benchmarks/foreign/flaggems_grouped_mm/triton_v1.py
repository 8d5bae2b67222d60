"""FlagGems' grouped GEMM (aten::_grouped_mm's Hopper path) with FlagGems' own configuration:
the first of its @libtuner's seven (128 x 256 tiles, 64-deep steps, GROUP_M 8, 8 warps, 3
stages), one persistent program per SM; the output and the TMA descriptors made outside the
timed call."""

from __future__ import annotations

from collections.abc import Callable

import torch

from foreign.flaggems_grouped_mm.launcher import GroupedMmConfig
from foreign.flaggems_grouped_mm.launcher import prepare as _prepare

# group_gemm.py's get_autotune_config() lists seven configurations that FlagGems' libtuner
# times (keyed on M, N, K); triton_v1 takes the first, as for the other FlagGems specs.
CONFIG = GroupedMmConfig(
    block_m=None,
    block_n=None,
    block_k=None,
    group_m=None,
    num_warps=None,
    num_stages=None,
    programs=None,
)


def prepare(a: torch.Tensor, b: torch.Tensor, offs: torch.Tensor) -> Callable[[], torch.Tensor]:
    """The output and the descriptors, outside the timed call."""
    return _prepare(CONFIG, a, b, offs)


def grouped_mm(a: torch.Tensor, b: torch.Tensor, offs: torch.Tensor) -> torch.Tensor:
    return prepare(a, b, offs)()
