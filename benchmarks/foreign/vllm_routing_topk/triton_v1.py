"""vLLM's routing top-k with triton_kernels' own launch: 32 tokens per program and 32-expert
tiles (fixed in topk_forward, BLOCK_S = 128 for the scratchpad), Triton's default 4 warps
(topk_forward passes none; no heuristic, autotuner or tuned table); the outputs, the
transposed bitmatrix and the scratchpad made outside the timed call."""

from __future__ import annotations

from collections.abc import Callable

import torch

from foreign.vllm_routing_topk.launcher import RoutingTopkConfig
from foreign.vllm_routing_topk.launcher import prepare as _prepare

CONFIG = RoutingTopkConfig(block_m=None, block_n=None, num_warps=None)


def prepare(
    logits: torch.Tensor, topk: int
) -> Callable[[], tuple[torch.Tensor, torch.Tensor, torch.Tensor]]:
    """topk_forward's allocations, outside the timed call."""
    return _prepare(CONFIG, logits, topk)


def route(logits: torch.Tensor, topk: int) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    return prepare(logits, topk)()
