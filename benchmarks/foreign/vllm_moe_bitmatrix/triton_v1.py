"""vLLM's top-k bitmatrix packing with vLLM's own launch: 512 tokens per program and a
32-lane top-k tile (fixed in make_routing_data), Triton's default 4 warps (vLLM passes
none; no heuristic, autotuner or tuned table); the int16 ids and the zeroed bitmatrix made
outside the timed call."""

from __future__ import annotations

from collections.abc import Callable

import torch

from foreign.vllm_moe_bitmatrix.launcher import BitmatrixConfig
from foreign.vllm_moe_bitmatrix.launcher import prepare as _prepare

CONFIG = BitmatrixConfig(block_m=None, num_warps=None)


def prepare(topk_ids: torch.Tensor, local_experts: int) -> Callable[[], torch.Tensor]:
    """vLLM's int16 cast of the ids and its zero-filled bitmatrix, outside the timed
    call."""
    return _prepare(CONFIG, topk_ids, local_experts)


def pack(topk_ids: torch.Tensor, local_experts: int) -> torch.Tensor:
    return prepare(topk_ids, local_experts)()
