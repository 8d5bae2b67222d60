"""Liger-Kernel's LayerNorm forward with Liger's own launch choice: one program per row,
warps from the row width."""

from __future__ import annotations

from collections.abc import Callable

import torch

from foreign.liger_layernorm.launcher import LigerLayerNormConfig
from foreign.liger_layernorm.launcher import prepare as _prepare

CONFIG = LigerLayerNormConfig(num_warps=None)


def prepare(
    x: torch.Tensor, w: torch.Tensor, b: torch.Tensor, eps: float
) -> Callable[[], torch.Tensor]:
    """Output, mean and rstd buffers, outside the timed call."""
    return _prepare(CONFIG, x, w, b, eps)


def layer_norm(x: torch.Tensor, w: torch.Tensor, b: torch.Tensor, eps: float) -> torch.Tensor:
    return prepare(x, w, b, eps)()
