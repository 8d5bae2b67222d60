"""SGLang's fused MoE router (tensor-core kernel) with SGLang's own launch for Grok: 32
tokens per program, max(experts, 16) expert columns, 256-deep K steps, Triton's default 4
warps and 3 stages (`fused_moe_router_shim` passes none; no autotune or tuned table)."""

from __future__ import annotations

from collections.abc import Callable

import torch

from foreign.sglang_moe_router.launcher import MoeRouterConfig
from foreign.sglang_moe_router.launcher import prepare as _prepare

CONFIG = MoeRouterConfig(block_m=None, block_n=None, block_k=None, num_warps=None, num_stages=None)


def prepare(
    x: torch.Tensor, router_weight: torch.Tensor, topk: int
) -> Callable[[], tuple[torch.Tensor, torch.Tensor]]:
    """The two outputs, outside the timed call."""
    return _prepare(CONFIG, x, router_weight, topk)


def moe_router(
    x: torch.Tensor, router_weight: torch.Tensor, topk: int
) -> tuple[torch.Tensor, torch.Tensor]:
    return prepare(x, router_weight, topk)()
