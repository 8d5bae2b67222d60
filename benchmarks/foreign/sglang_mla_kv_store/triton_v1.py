"""SGLang's MLA latent-cache store with SGLang's own launch: 128 values per program (fixed in
set_mla_kv_buffer_triton), Triton's default 4 warps (SGLang passes none; no heuristic,
autotuner or tuned table); the pool written in place."""

from __future__ import annotations

from collections.abc import Callable

import torch

from foreign.sglang_mla_kv_store.launcher import MlaKvStoreConfig
from foreign.sglang_mla_kv_store.launcher import prepare as _prepare

CONFIG = MlaKvStoreConfig(block=None, num_warps=None)


def prepare(
    kv_buffer: torch.Tensor, loc: torch.Tensor, k_nope: torch.Tensor, k_rope: torch.Tensor
) -> Callable[[], torch.Tensor]:
    """Nothing to allocate: the launch writes the pool in place."""
    return _prepare(CONFIG, kv_buffer, loc, k_nope, k_rope)


def store(
    kv_buffer: torch.Tensor, loc: torch.Tensor, k_nope: torch.Tensor, k_rope: torch.Tensor
) -> torch.Tensor:
    return prepare(kv_buffer, loc, k_nope, k_rope)()
