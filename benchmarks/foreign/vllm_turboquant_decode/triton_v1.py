"""vLLM's TurboQuant decode attention with vLLM's own launch: 32 KV splits per request
(tq_max_kv_splits_for_cuda_graph's default), 4 tokens a step with 1 warp and 1 stage; the
splits merged with 4 warps and 2 stages (no heuristic, autotuner or tuned table); the
rotated query, the split buffer and the output made outside the timed call."""

from __future__ import annotations

from collections.abc import Callable

import torch

from foreign.vllm_turboquant_decode.launcher import TqDecodeConfig
from foreign.vllm_turboquant_decode.launcher import prepare as _prepare

CONFIG = TqDecodeConfig(
    block_kv=None, num_warps=None, num_stages=None, num_kv_splits=None, merge_warps=None,
    merge_stages=None,
)  # fmt: skip


def prepare(
    query: torch.Tensor, kv_cache: torch.Tensor, block_table: torch.Tensor,
    seq_lens: torch.Tensor, pit: torch.Tensor, centroids: torch.Tensor, key_bits: int,
    value_bits: int,
) -> Callable[[], torch.Tensor]:  # fmt: skip
    """The rotated query, the split buffer, the output and the grids, outside the timed
    call."""
    return _prepare(
        CONFIG, query, kv_cache, block_table, seq_lens, pit, centroids, key_bits, value_bits
    )


def tq_decode(
    query: torch.Tensor, kv_cache: torch.Tensor, block_table: torch.Tensor,
    seq_lens: torch.Tensor, pit: torch.Tensor, centroids: torch.Tensor, key_bits: int,
    value_bits: int,
) -> torch.Tensor:  # fmt: skip
    return prepare(query, kv_cache, block_table, seq_lens, pit, centroids, key_bits, value_bits)()
