"""Liger-Kernel's fused MoE down-projection (grouped GEMM over expert-sorted rows) with the
launch Liger pins when its autotuner is off: 64-row routing tiles, 128 x 64 weight tiles,
8 warps, 2 stages."""

from __future__ import annotations

from collections.abc import Callable

import torch

from foreign.liger_moe_down_proj.launcher import LigerMoeDownProjConfig
from foreign.liger_moe_down_proj.launcher import prepare as _prepare

CONFIG = LigerMoeDownProjConfig(
    block_m=None, block_n=None, block_k=None, num_warps=None, num_stages=None
)


def prepare(
    act: torch.Tensor, down: torch.Tensor, topk: torch.Tensor
) -> Callable[[], torch.Tensor]:
    """Liger's routing metadata (three kernels and a host sync) and the output buffer,
    outside the timed call."""
    return _prepare(CONFIG, act, down, topk)


def moe_down_proj(act: torch.Tensor, down: torch.Tensor, topk: torch.Tensor) -> torch.Tensor:
    return prepare(act, down, topk)()
