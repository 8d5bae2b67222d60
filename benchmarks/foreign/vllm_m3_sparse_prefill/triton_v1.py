"""MiniMax M3's Hopper block-sparse GQA prefill with vLLM's own launch: 16 query tokens a
program (`_PREFILL_TILE_Q`, fixed), 128-token blocks (the page), warps by vLLM's formula
(16 at MiniMax M3's 16 query heads per KV head), Triton's default 3 stages (vLLM passes
none; no autotuner or tuned table); the top-k view and the output made outside the timed
call."""

from __future__ import annotations

from collections.abc import Callable

import torch

from foreign.vllm_m3_sparse_prefill.launcher import SparsePrefillConfig
from foreign.vllm_m3_sparse_prefill.launcher import prepare as _prepare

CONFIG = SparsePrefillConfig(tile_q=None, num_warps=None, num_stages=None)


def prepare(
    q: torch.Tensor, kv_cache: torch.Tensor, topk: torch.Tensor, block_table: torch.Tensor,
    cu_seqlens_q: torch.Tensor, seq_lens: torch.Tensor, prefix_lens: torch.Tensor,
    max_query_len: int, sm_scale: float,
) -> Callable[[], torch.Tensor]:  # fmt: skip
    """The top-k view and the output, outside the timed call."""
    return _prepare(
        CONFIG, q, kv_cache, topk, block_table, cu_seqlens_q, seq_lens, prefix_lens,
        max_query_len, sm_scale,
    )  # fmt: skip


def sparse_prefill(
    q: torch.Tensor, kv_cache: torch.Tensor, topk: torch.Tensor, block_table: torch.Tensor,
    cu_seqlens_q: torch.Tensor, seq_lens: torch.Tensor, prefix_lens: torch.Tensor,
    max_query_len: int, sm_scale: float,
) -> torch.Tensor:  # fmt: skip
    return prepare(
        q,
        kv_cache,
        topk,
        block_table,
        cu_seqlens_q,
        seq_lens,
        prefix_lens,
        max_query_len,
        sm_scale,
    )()
