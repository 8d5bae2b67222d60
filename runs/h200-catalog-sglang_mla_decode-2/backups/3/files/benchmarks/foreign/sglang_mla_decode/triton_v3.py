"""triton_v3 — triton_v1 with block_h 16 -> 32 (heads_per_program x2) (catalog move of too-few-heads-per-program-kv-reread).

A copy of triton_v1 with only knob values changed (the catalog designer); triton_v1's notes follow.

SGLang's Triton MLA decode with SGLang's own launch parameters (BLOCK_N=32, BLOCK_H=16,
8 KV splits, 2 stages, 4 warps): stage 1 reads each KV tile once per group of 16 heads.
"""

from __future__ import annotations

from collections.abc import Callable

import torch

from foreign.sglang_mla_decode.launcher import SglangConfig
from foreign.sglang_mla_decode.launcher import prepare as _prepare

CONFIG = SglangConfig(block_n=32, block_h=32, num_kv_splits=8, num_stages=2, num_warps=4)


def prepare(
    q: torch.Tensor, kv_cache: torch.Tensor, cache_seqlens: torch.Tensor, sm_scale: float
) -> Callable[[], torch.Tensor]:
    """SGLang's per-batch set-up (page table, workspaces), outside the timed call."""
    return _prepare(CONFIG, q, kv_cache, cache_seqlens, sm_scale)


def mla_decode(
    q: torch.Tensor, kv_cache: torch.Tensor, cache_seqlens: torch.Tensor, sm_scale: float
) -> torch.Tensor:
    return prepare(q, kv_cache, cache_seqlens, sm_scale)()
