"""vLLM's paged KV-cache store with vLLM's own launch on CUDA: one program per token and
2048-element tile of its row (the row's power of two when narrower), 16 warps, 10 stages."""

from __future__ import annotations

from collections.abc import Callable

import torch

from foreign.vllm_reshape_and_cache.launcher import ReshapeAndCacheConfig
from foreign.vllm_reshape_and_cache.launcher import prepare as _prepare

CONFIG = ReshapeAndCacheConfig(tile_size=None, num_warps=None, num_stages=None)


def prepare(
    key: torch.Tensor, value: torch.Tensor, key_cache: torch.Tensor, value_cache: torch.Tensor,
    slot_mapping: torch.Tensor,
) -> Callable[[], tuple[torch.Tensor, torch.Tensor]]:  # fmt: skip
    """The unused fp8 scales and the grid, outside the timed call."""
    return _prepare(CONFIG, key, value, key_cache, value_cache, slot_mapping)


def reshape_and_cache(
    key: torch.Tensor,
    value: torch.Tensor,
    key_cache: torch.Tensor,
    value_cache: torch.Tensor,
    slot_mapping: torch.Tensor,
) -> tuple[torch.Tensor, torch.Tensor]:
    return prepare(key, value, key_cache, value_cache, slot_mapping)()
