"""Liger-Kernel's fused MoE input gradient through the gate/up projection with the launch
Liger pins when its autotuner is off: 64-row routing tiles, 128 hidden columns per program,
the intermediate size 64 deep a step (a gate and an up tl.dot each), 8 warps, 2 stages;
the routing metadata and the output made outside the timed call."""

from __future__ import annotations

from collections.abc import Callable

import torch

from foreign.liger_moe_up_proj_dgrad.launcher import LigerMoeUpProjDgradConfig
from foreign.liger_moe_up_proj_dgrad.launcher import prepare as _prepare

# liger's backward launches _moe_bwd_dX_expanded_kernel with BLOCK_M_TOKEN 64 under the
# autotuner of its forward GEMMs (32 configurations, no tuned table);
# LIGER_FUSED_MOE_AUTOTUNE=0 pins it to BLOCK_N 128, BLOCK_K 64, 8 warps, 2 stages on every
# GPU: these are the values it runs on an H100 so.
CONFIG = LigerMoeUpProjDgradConfig(
    block_m=None, block_n=None, block_k=None, num_warps=None, num_stages=None
)


def prepare(
    d_pre_act: torch.Tensor, gate_up: torch.Tensor, topk: torch.Tensor
) -> Callable[[], torch.Tensor]:
    """Liger's routing metadata (three kernels and a host sync) and dx_expanded, outside
    the timed call."""
    return _prepare(CONFIG, d_pre_act, gate_up, topk)


def moe_up_proj_dgrad(
    d_pre_act: torch.Tensor, gate_up: torch.Tensor, topk: torch.Tensor
) -> torch.Tensor:
    return prepare(d_pre_act, gate_up, topk)()
