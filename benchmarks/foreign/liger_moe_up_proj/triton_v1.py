"""Liger-Kernel's fused MoE up-projection (gather + grouped GEMM + SwiGLU) with the launch
Liger pins when its autotuner is off: 64-row routing tiles, 128 x 64 weight tiles, 8 warps,
2 stages."""

from __future__ import annotations

from collections.abc import Callable

import torch

from foreign.liger_moe_up_proj.launcher import LigerMoeUpProjConfig
from foreign.liger_moe_up_proj.launcher import prepare as _prepare

CONFIG = LigerMoeUpProjConfig(
    block_m=None, block_n=None, block_k=None, num_warps=None, num_stages=None
)


def prepare(
    x: torch.Tensor, gate_up: torch.Tensor, topk: torch.Tensor
) -> Callable[[], tuple[torch.Tensor, torch.Tensor]]:
    """Liger's routing metadata (three kernels and a host sync) and the output buffers,
    outside the timed call."""
    return _prepare(CONFIG, x, gate_up, topk)


def moe_up_proj(
    x: torch.Tensor, gate_up: torch.Tensor, topk: torch.Tensor
) -> tuple[torch.Tensor, torch.Tensor]:
    return prepare(x, gate_up, topk)()
