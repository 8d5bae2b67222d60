"""Transformer Engine's fused grouped bias gradient with TE's own launch
(`_launch_grouped_dbias`, the same for every shape): 128 rows of a group a step, 128 columns
a program, a group's row tiles split across 4 programs, 4 warps, 2 stages, the dscales
fusion on; dbias and dscales allocated outside the timed call, their zero fills inside it."""

from __future__ import annotations

from collections.abc import Callable

import torch

from foreign.te_grouped_dbias_dscales.launcher import GroupedDbiasConfig
from foreign.te_grouped_dbias_dscales.launcher import prepare as _prepare

CONFIG = GroupedDbiasConfig(
    block_m=None, block_h=None, n_row_splits=None, num_warps=None, num_stages=None
)


def prepare(
    dy: torch.Tensor, scales: torch.Tensor, bias: torch.Tensor, offsets: torch.Tensor
) -> Callable[[], tuple[torch.Tensor, torch.Tensor]]:
    """The fp32 dbias and dscales buffers, outside the timed call (zeroed inside it)."""
    return _prepare(CONFIG, dy, scales, bias, offsets)


def grouped_dbias_dscales(
    dy: torch.Tensor, scales: torch.Tensor, bias: torch.Tensor, offsets: torch.Tensor
) -> tuple[torch.Tensor, torch.Tensor]:
    return prepare(dy, scales, bias, offsets)()
