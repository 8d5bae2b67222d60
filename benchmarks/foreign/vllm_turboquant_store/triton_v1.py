"""vLLM's TurboQuant MSE KV-cache store with vLLM's own launch (one program per token and
KV head, 4 warps, 1 stage); the cache written in place."""

from __future__ import annotations

from collections.abc import Callable

import torch

from foreign.vllm_turboquant_store.launcher import TurboQuantStoreConfig
from foreign.vllm_turboquant_store.launcher import prepare as _prepare

# triton_turboquant_store's MSE path: num_warps=4, num_stages=1 (fixed, no autotuning).
CONFIG = TurboQuantStoreConfig(num_warps=None, num_stages=None)


def prepare(
    y: torch.Tensor, norms: torch.Tensor, values: torch.Tensor, midpoints: torch.Tensor,
    kv_cache: torch.Tensor, slot_mapping: torch.Tensor, key_bits: int, value_bits: int,
) -> Callable[[], torch.Tensor]:  # fmt: skip
    """Nothing to set up: the kernel writes into the cache."""
    return _prepare(
        CONFIG, y, norms, values, midpoints, kv_cache, slot_mapping, key_bits, value_bits
    )


def store(
    y: torch.Tensor, norms: torch.Tensor, values: torch.Tensor, midpoints: torch.Tensor,
    kv_cache: torch.Tensor, slot_mapping: torch.Tensor, key_bits: int, value_bits: int,
) -> torch.Tensor:  # fmt: skip
    return prepare(y, norms, values, midpoints, kv_cache, slot_mapping, key_bits, value_bits)()
