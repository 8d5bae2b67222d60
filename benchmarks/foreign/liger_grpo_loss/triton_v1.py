"""Liger-Kernel's GRPO loss forward with Liger's own launch: one program (one warp) per
generated token, 2048-column steps, two stages."""

from __future__ import annotations

from collections.abc import Callable

import torch

from foreign.liger_grpo_loss.launcher import LigerGrpoLossConfig
from foreign.liger_grpo_loss.launcher import prepare as _prepare

CONFIG = LigerGrpoLossConfig(block_n=None, num_warps=None, num_stages=None)


def prepare(
    logits: torch.Tensor,
    old_logp: torch.Tensor,
    ref_logp: torch.Tensor,
    ids: torch.Tensor,
    advantages: torch.Tensor,
    mask: torch.Tensor,
) -> Callable[[], tuple[torch.Tensor, torch.Tensor, torch.Tensor]]:
    """The four output buffers, outside the timed call."""
    return _prepare(CONFIG, logits, old_logp, ref_logp, ids, advantages, mask)


def grpo_loss(
    logits: torch.Tensor,
    old_logp: torch.Tensor,
    ref_logp: torch.Tensor,
    ids: torch.Tensor,
    advantages: torch.Tensor,
    mask: torch.Tensor,
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    return prepare(logits, old_logp, ref_logp, ids, advantages, mask)()
