"""Liger-Kernel's Llama 4 RoPE forward with Liger's own launch: one program per (token,
head), the head's 64 complex pairs in one step, 4 warps, 2 stages."""

from __future__ import annotations

from collections.abc import Callable

import torch

from foreign.liger_llama4_rope.launcher import LigerLlama4RopeConfig
from foreign.liger_llama4_rope.launcher import prepare as _prepare

CONFIG = LigerLlama4RopeConfig(block_size=None, num_warps=None)


def prepare(
    q: torch.Tensor, k: torch.Tensor, freqs: torch.Tensor
) -> Callable[[], tuple[torch.Tensor, torch.Tensor]]:
    """Shape checks and the grid, outside the timed call."""
    return _prepare(CONFIG, q, k, freqs)


def rope(
    q: torch.Tensor, k: torch.Tensor, freqs: torch.Tensor
) -> tuple[torch.Tensor, torch.Tensor]:
    return prepare(q, k, freqs)()
