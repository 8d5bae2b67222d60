"""vLLM's unified attention with vLLM's own 2D launch on CUDA: BLOCK_M 16 rows (queries
per KV head up to 16), BLOCK_Q = 16 / queries-per-kv query tokens, 32-key tiles, Triton's
default 4 warps and 3 stages (vLLM passes neither; the gfx1100/gfx1201 tables and the sm100
head-256 tuning do not apply); the output and the layer scales made outside the timed
call."""

from __future__ import annotations

from collections.abc import Callable

import torch

from foreign.vllm_unified_attention.launcher import UnifiedAttentionConfig
from foreign.vllm_unified_attention.launcher import prepare as _prepare

CONFIG = UnifiedAttentionConfig(block_m=None, tile_size=None, num_warps=None, num_stages=None)


def prepare(
    q: torch.Tensor, k_cache: torch.Tensor, v_cache: torch.Tensor, block_table: torch.Tensor,
    seq_lens: torch.Tensor, cu_seqlens_q: torch.Tensor, scale: float,
) -> Callable[[], torch.Tensor]:  # fmt: skip
    """The output and the scales, outside the timed call."""
    return _prepare(CONFIG, q, k_cache, v_cache, block_table, seq_lens, cu_seqlens_q, scale)


def unified_attention(
    q: torch.Tensor, k_cache: torch.Tensor, v_cache: torch.Tensor, block_table: torch.Tensor,
    seq_lens: torch.Tensor, cu_seqlens_q: torch.Tensor, scale: float,
) -> torch.Tensor:  # fmt: skip
    return prepare(q, k_cache, v_cache, block_table, seq_lens, cu_seqlens_q, scale)()
