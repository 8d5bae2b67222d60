"""Liger-Kernel's fused MoE token aggregation with the launch Liger pins when its autotuner
is off: one program per token, 128 hidden columns a tile, the token's top-k rows 4 at a
step, 4 warps, 4 stages; the routing metadata and the output made outside the timed call."""

from __future__ import annotations

from collections.abc import Callable

import torch

from foreign.liger_moe_combine.launcher import LigerMoeCombineConfig
from foreign.liger_moe_combine.launcher import prepare as _prepare

# liger's forward launches _token_gather_weighted_sum_kernel one program per token under an
# autotuner over 40 configurations with no tuned table; LIGER_FUSED_MOE_AUTOTUNE=0 pins it
# to BLOCK_H 128, BLOCK_K 4, 4 warps, 4 stages on every GPU: these are the values it runs
# on an H100 so.
CONFIG = LigerMoeCombineConfig(block_h=None, block_k=None, num_warps=None, num_stages=None)


def prepare(
    y: torch.Tensor, weights: torch.Tensor, topk: torch.Tensor
) -> Callable[[], torch.Tensor]:
    """Liger's routing metadata (three kernels and a host sync) and the output, outside the
    timed call."""
    return _prepare(CONFIG, y, weights, topk)


def moe_combine(y: torch.Tensor, weights: torch.Tensor, topk: torch.Tensor) -> torch.Tensor:
    return prepare(y, weights, topk)()
