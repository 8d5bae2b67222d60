"""SGLang's fused MoE GEMM with SGLang's own launch: its default configuration for an
unquantized MoE without a tuned table (64 x 64 x 32 tiles in groups of 8 row blocks above
`experts` tokens, 16 x 32 x 64 ungrouped at or below), Triton's default 4 warps and 3
stages, the assignments sorted and padded by expert outside the timed call."""

from __future__ import annotations

from collections.abc import Callable

import torch

from foreign.sglang_fused_moe.launcher import FusedMoeConfig
from foreign.sglang_fused_moe.launcher import prepare as _prepare

CONFIG = FusedMoeConfig(
    block_m=None, block_n=None, block_k=None, group_m=None, num_warps=None, num_stages=None
)


def prepare(
    x: torch.Tensor, w1: torch.Tensor, topk_ids: torch.Tensor
) -> Callable[[], torch.Tensor]:
    """The expert-sorted assignment ids, the block-to-expert map and the output buffer,
    outside the timed call."""
    return _prepare(CONFIG, x, w1, topk_ids)


def fused_moe_gemm(x: torch.Tensor, w1: torch.Tensor, topk_ids: torch.Tensor) -> torch.Tensor:
    return prepare(x, w1, topk_ids)()
