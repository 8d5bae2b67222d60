"""Liger-Kernel's fused SwiGLU gate/up projection (dual tl.dot GEMM over TMA descriptors,
SwiGLU epilogue) with the first configuration of Liger's autotuner: 32 x 128 x 64 tiles,
no L2 swizzle, 4 warps, 2 stages."""

from __future__ import annotations

from collections.abc import Callable

import torch

from foreign.liger_mlp_gate_up.launcher import LigerMlpGateUpConfig
from foreign.liger_mlp_gate_up.launcher import prepare as _prepare

CONFIG = LigerMlpGateUpConfig(
    block_m=None, block_n=None, block_k=None, group_m=None, num_warps=None, num_stages=None
)


def prepare(
    x: torch.Tensor, gate_weight: torch.Tensor, up_weight: torch.Tensor
) -> Callable[[], torch.Tensor]:
    """The output buffer and the four TMA descriptors, outside the timed call."""
    return _prepare(CONFIG, x, gate_weight, up_weight)


def mlp_gate_up(
    x: torch.Tensor, gate_weight: torch.Tensor, up_weight: torch.Tensor
) -> torch.Tensor:
    return prepare(x, gate_weight, up_weight)()
