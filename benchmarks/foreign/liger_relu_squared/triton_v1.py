"""Liger-Kernel's squared-ReLU forward with Liger's own launch: one program per row holding
the whole row, num_warps from Liger's calculate_settings."""

from __future__ import annotations

from collections.abc import Callable

import torch

from foreign.liger_relu_squared.launcher import LigerReluSquaredConfig
from foreign.liger_relu_squared.launcher import prepare as _prepare

CONFIG = LigerReluSquaredConfig(num_warps=None)


def prepare(x: torch.Tensor) -> Callable[[], torch.Tensor]:
    """The output buffer, outside the timed call."""
    return _prepare(CONFIG, x)


def relu_squared(x: torch.Tensor) -> torch.Tensor:
    return prepare(x)()
