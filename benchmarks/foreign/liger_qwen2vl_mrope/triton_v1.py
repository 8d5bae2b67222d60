"""Liger-Kernel's Qwen2-VL M-RoPE forward (q and k rotated in place) with Liger's own
launch: one program per token, all its heads, Triton's default 4 warps."""

from __future__ import annotations

from collections.abc import Callable

import torch

from foreign.liger_qwen2vl_mrope.launcher import LigerQwen2vlMropeConfig
from foreign.liger_qwen2vl_mrope.launcher import prepare as _prepare

CONFIG = LigerQwen2vlMropeConfig(num_warps=None)


def prepare(
    q: torch.Tensor, k: torch.Tensor, cos: torch.Tensor, sin: torch.Tensor
) -> Callable[[], tuple[torch.Tensor, torch.Tensor]]:
    return _prepare(CONFIG, q, k, cos, sin)


def mrope(
    q: torch.Tensor, k: torch.Tensor, cos: torch.Tensor, sin: torch.Tensor
) -> tuple[torch.Tensor, torch.Tensor]:
    return prepare(q, k, cos, sin)()
