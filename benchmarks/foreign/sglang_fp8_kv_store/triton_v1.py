"""SGLang's fused FP8 KV-cache store with SGLang's own launch: one program per (token, up to
8 kv heads, K or V), 128-wide steps over the head dimension, Triton's default 4 warps and 3
stages."""

from __future__ import annotations

from collections.abc import Callable

import torch

from foreign.sglang_fp8_kv_store.launcher import Fp8KvStoreConfig
from foreign.sglang_fp8_kv_store.launcher import prepare as _prepare

CONFIG = Fp8KvStoreConfig(block_head=None, block_dim=None, num_warps=None, num_stages=None)


def prepare(
    k: torch.Tensor, v: torch.Tensor, k_cache: torch.Tensor, v_cache: torch.Tensor,
    cache_loc: torch.Tensor, k_scale: torch.Tensor, v_scale: torch.Tensor, page_size: int,
) -> Callable[[], tuple[torch.Tensor, torch.Tensor]]:  # fmt: skip
    """The inverse scales and the grid, outside the timed call."""
    return _prepare(CONFIG, k, v, k_cache, v_cache, cache_loc, k_scale, v_scale, page_size)


def fp8_kv_store(
    k: torch.Tensor, v: torch.Tensor, k_cache: torch.Tensor, v_cache: torch.Tensor,
    cache_loc: torch.Tensor, k_scale: torch.Tensor, v_scale: torch.Tensor, page_size: int,
) -> tuple[torch.Tensor, torch.Tensor]:  # fmt: skip
    return prepare(k, v, k_cache, v_cache, cache_loc, k_scale, v_scale, page_size)()
