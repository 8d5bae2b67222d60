"""Liger-Kernel's GroupNorm forward with Liger's own launch: one program per (sample,
group), steps of min(65536, next_pow2(group size)) elements, Triton's default 4 warps."""

from __future__ import annotations

from collections.abc import Callable

import torch

from foreign.liger_group_norm.launcher import LigerGroupNormConfig
from foreign.liger_group_norm.launcher import prepare as _prepare

CONFIG = LigerGroupNormConfig(block_size=None, num_warps=None)


def prepare(
    x: torch.Tensor, w: torch.Tensor, b: torch.Tensor, groups: int, eps: float
) -> Callable[[], torch.Tensor]:
    """Output, mean and rstd buffers, outside the timed call."""
    return _prepare(CONFIG, x, w, b, groups, eps)


def group_norm(
    x: torch.Tensor, w: torch.Tensor, b: torch.Tensor, groups: int, eps: float
) -> torch.Tensor:
    return prepare(x, w, b, groups, eps)()
