"""Liger-Kernel's PolyNorm forward with Liger's own launch: one program per row holding the
whole row, num_warps from Liger's calculate_settings."""

from __future__ import annotations

from collections.abc import Callable

import torch

from foreign.liger_poly_norm.launcher import LigerPolyNormConfig
from foreign.liger_poly_norm.launcher import prepare as _prepare

CONFIG = LigerPolyNormConfig(num_warps=None)


def prepare(
    x: torch.Tensor, w: torch.Tensor, b: torch.Tensor, eps: float
) -> Callable[[], torch.Tensor]:
    """The output and rstd buffers, outside the timed call."""
    return _prepare(CONFIG, x, w, b, eps)


def poly_norm(x: torch.Tensor, w: torch.Tensor, b: torch.Tensor, eps: float) -> torch.Tensor:
    return prepare(x, w, b, eps)()
