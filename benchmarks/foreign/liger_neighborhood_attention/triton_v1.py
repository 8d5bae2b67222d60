"""Liger-Kernel's fused neighborhood attention forward (dense QK^T tiles masked to the
neighborhood, Liger's softmax over whole rows, dense weights @ V) with Liger's own launch:
64 x 64 tiles, head-wide k steps, softmax warps from the row length, and the 4 warps and 3
stages the compiler gets by default."""

from __future__ import annotations

from collections.abc import Callable

import torch

from foreign.liger_neighborhood_attention.launcher import LigerNeighborhoodAttentionConfig
from foreign.liger_neighborhood_attention.launcher import prepare as _prepare

CONFIG = LigerNeighborhoodAttentionConfig(
    block_m=None, block_n=None, block_k=None, softmax_warps=None
)


def prepare(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor) -> Callable[[], torch.Tensor]:
    """The neighborhood mask (Liger's mask kernel) and the score, weight and output
    buffers, outside the timed call."""
    return _prepare(CONFIG, q, k, v)


def neighborhood_attention(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor) -> torch.Tensor:
    return prepare(q, k, v)()
