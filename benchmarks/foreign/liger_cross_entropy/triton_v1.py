"""Liger-Kernel's cross-entropy forward (loss and in-place logits gradient) with Liger's own
launch choices on Hopper: 32768-column steps, 32 warps, one program per token."""

from __future__ import annotations

from collections.abc import Callable

import torch

from foreign.liger_cross_entropy.launcher import LigerCrossEntropyConfig
from foreign.liger_cross_entropy.launcher import prepare as _prepare

CONFIG = LigerCrossEntropyConfig(block_size=None, num_warps=None)


def prepare(
    logits: torch.Tensor, target: torch.Tensor
) -> Callable[[], tuple[torch.Tensor, torch.Tensor]]:
    """Target count and range check (host syncs) and the loss buffer, outside the timed call."""
    return _prepare(CONFIG, logits, target)


def cross_entropy(logits: torch.Tensor, target: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    return prepare(logits, target)()
