"""Liger-Kernel's GEGLU forward with Liger's own launch choice: one program per row holding
the whole (padded) row, warps from the row width."""

from __future__ import annotations

from collections.abc import Callable

import torch

from foreign.liger_geglu.launcher import LigerGegluConfig
from foreign.liger_geglu.launcher import prepare as _prepare

CONFIG = LigerGegluConfig(num_warps=None)


def prepare(a: torch.Tensor, b: torch.Tensor) -> Callable[[], torch.Tensor]:
    """Output allocation, outside the timed call."""
    return _prepare(CONFIG, a, b)


def geglu(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    return prepare(a, b)()
