"""Liger-Kernel's RoPE forward with Liger's own launch: one program per token, all heads of
q and k rotated in place, Triton's default 4 warps."""

from __future__ import annotations

from collections.abc import Callable

import torch

from foreign.liger_rope.launcher import LigerRopeConfig
from foreign.liger_rope.launcher import prepare as _prepare

CONFIG = LigerRopeConfig(num_warps=None)


def prepare(
    q: torch.Tensor, k: torch.Tensor, cos: torch.Tensor, sin: torch.Tensor
) -> Callable[[], tuple[torch.Tensor, torch.Tensor]]:
    """Shape arithmetic, outside the timed call."""
    return _prepare(CONFIG, q, k, cos, sin)


def rope(
    q: torch.Tensor, k: torch.Tensor, cos: torch.Tensor, sin: torch.Tensor
) -> tuple[torch.Tensor, torch.Tensor]:
    return prepare(q, k, cos, sin)()
