"""FlagGems' Hopper GEMM (aten::mm's sm90 TMA path) with FlagGems' own configuration: the
first of its @libtuner's list (32 x 32 tiles, 32-deep steps, 4 warps, 2 stages) with
general_mm's GROUP_M 8; the output and the TMA descriptors made outside the timed call."""

from __future__ import annotations

from collections.abc import Callable

import torch

from foreign.flaggems_mm_tma.launcher import MmTmaConfig
from foreign.flaggems_mm_tma.launcher import prepare as _prepare

# hopper/ops/mm.py's matmul_get_configs() lists 216 configurations that FlagGems' libtuner
# times (keyed on M, N, K, strides, dtype); triton_v1 takes the first, as for the other
# FlagGems specs.
CONFIG = MmTmaConfig(
    block_m=None,
    block_n=None,
    block_k=None,
    group_m=None,
    num_warps=None,
    num_stages=None,
)


def prepare(a: torch.Tensor, b: torch.Tensor) -> Callable[[], torch.Tensor]:
    """The output and the descriptors, outside the timed call."""
    return _prepare(CONFIG, a, b)


def mm(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    return prepare(a, b)()
