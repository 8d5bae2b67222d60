"""Liger-Kernel's fused MoE gate/up weight gradient with the launch Liger pins when its
autotuner is off: one program per (expert, 64 hidden columns, 128 gradient rows), the
expert's rows 32 at a time, 8 warps, 2 stages; the routing metadata and the zeroed gradient
made outside the timed call."""

from __future__ import annotations

from collections.abc import Callable

import torch

from foreign.liger_moe_up_proj_wgrad.launcher import LigerMoeUpProjWgradConfig
from foreign.liger_moe_up_proj_wgrad.launcher import prepare as _prepare

# liger's backward launches _moe_bwd_dW1_kernel under an autotuner over 16 configurations
# with no tuned table; LIGER_FUSED_MOE_AUTOTUNE=0 pins it to BLOCK_M 64, BLOCK_N 128,
# BLOCK_K 32, 8 warps, 2 stages on every GPU: these are the values it runs on an H100 so.
CONFIG = LigerMoeUpProjWgradConfig(
    block_m=None, block_n=None, block_k=None, num_warps=None, num_stages=None
)


def prepare(
    x: torch.Tensor, d_pre: torch.Tensor, topk: torch.Tensor, experts: int
) -> Callable[[], torch.Tensor]:
    """The expert starts and gather indices (the forward's routing) and the gradient,
    zero-filled once, outside the timed call."""
    return _prepare(CONFIG, x, d_pre, topk, experts)


def moe_up_proj_wgrad(
    x: torch.Tensor, d_pre: torch.Tensor, topk: torch.Tensor, experts: int
) -> torch.Tensor:
    return prepare(x, d_pre, topk, experts)()
