"""Liger-Kernel's fused MoE down-projection and SwiGLU backward with the launch Liger pins
when its autotuner is off: 64-row routing tiles, 128 inter columns per program, the hidden
size 64 deep a step, 8 warps, 2 stages; the routing metadata and two of the outputs made
outside the timed call, the routing weights' gradient zero-filled in it."""

from __future__ import annotations

from collections.abc import Callable

import torch

from foreign.liger_moe_down_proj_bwd.launcher import LigerMoeDownProjBwdConfig
from foreign.liger_moe_down_proj_bwd.launcher import prepare as _prepare

# liger's backward launches _moe_bwd_down_proj_kernel with BLOCK_M_TOKEN 64 under an
# autotuner over 32 configurations with no tuned table; LIGER_FUSED_MOE_AUTOTUNE=0 pins it
# to BLOCK_N 128, BLOCK_K 64, 8 warps, 2 stages on every GPU: these are the values it runs
# on an H100 so.
CONFIG = LigerMoeDownProjBwdConfig(
    block_m=None, block_n=None, block_k=None, num_warps=None, num_stages=None
)


def prepare(
    d_out: torch.Tensor,
    pre_act: torch.Tensor,
    down: torch.Tensor,
    topk: torch.Tensor,
    weights: torch.Tensor,
) -> Callable[[], tuple[torch.Tensor, torch.Tensor, torch.Tensor]]:
    """Liger's routing metadata (three kernels and a host sync), d_pre_act and
    weighted_act, outside the timed call."""
    return _prepare(CONFIG, d_out, pre_act, down, topk, weights)


def moe_down_proj_bwd(
    d_out: torch.Tensor,
    pre_act: torch.Tensor,
    down: torch.Tensor,
    topk: torch.Tensor,
    weights: torch.Tensor,
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    return prepare(d_out, pre_act, down, topk, weights)()
