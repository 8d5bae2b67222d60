"""SGLang's unified extend attention with SGLang's own launch on a Hopper GPU: BLOCK_M 128,
BLOCK_N 64, 4 warps (for heads of 64), 1 stage, causal, sinks, page size 1, no custom mask
or sliding window."""

from __future__ import annotations

from collections.abc import Callable

import torch

from foreign.sglang_extend_unified.launcher import ExtendUnifiedConfig
from foreign.sglang_extend_unified.launcher import prepare as _prepare

CONFIG = ExtendUnifiedConfig(block_m=None, block_n=None, num_warps=None, num_stages=None)


def prepare(
    q: torch.Tensor, k_buffer: torch.Tensor, v_buffer: torch.Tensor, qo_indptr: torch.Tensor,
    kv_indptr: torch.Tensor, kv_indices: torch.Tensor, prefix_lens: torch.Tensor,
    sinks: torch.Tensor,
) -> Callable[[], torch.Tensor]:  # fmt: skip
    """The output buffer, max_len_extend and the grid, outside the timed call."""
    return _prepare(
        CONFIG, q, k_buffer, v_buffer, qo_indptr, kv_indptr, kv_indices, prefix_lens, sinks
    )


def extend_attention_unified(
    q: torch.Tensor, k_buffer: torch.Tensor, v_buffer: torch.Tensor, qo_indptr: torch.Tensor,
    kv_indptr: torch.Tensor, kv_indices: torch.Tensor, prefix_lens: torch.Tensor,
    sinks: torch.Tensor,
) -> torch.Tensor:  # fmt: skip
    return prepare(q, k_buffer, v_buffer, qo_indptr, kv_indptr, kv_indices, prefix_lens, sinks)()
