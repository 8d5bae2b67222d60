"""Liger-Kernel's DyT forward with Liger's own launch: its autotuner picks BLOCK_N,
num_stages and num_warps among 18 configurations on the first call of each width."""

from __future__ import annotations

from collections.abc import Callable

import torch

from foreign.liger_dyt.launcher import LigerDytConfig
from foreign.liger_dyt.launcher import prepare as _prepare

CONFIG = LigerDytConfig(block_n=None, num_stages=None, num_warps=None)


def prepare(
    x: torch.Tensor, alpha: torch.Tensor, gamma: torch.Tensor, beta: torch.Tensor
) -> Callable[[], torch.Tensor]:
    """The output buffer and the autotuner's timing (first call per width), outside the
    timed call."""
    return _prepare(CONFIG, x, alpha, gamma, beta)


def dyt(
    x: torch.Tensor, alpha: torch.Tensor, gamma: torch.Tensor, beta: torch.Tensor
) -> torch.Tensor:
    return prepare(x, alpha, gamma, beta)()
