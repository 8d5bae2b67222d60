"""SGLang's extend attention with SGLang's own launch on a Hopper GPU: BLOCK_M 128, BLOCK_N
64, 8 warps (for heads of 128), 1 stage, causal, page size 1, no custom mask."""

from __future__ import annotations

from collections.abc import Callable

import torch

from foreign.sglang_extend_attention.launcher import ExtendAttentionConfig
from foreign.sglang_extend_attention.launcher import prepare as _prepare

CONFIG = ExtendAttentionConfig(block_m=None, block_n=None, num_warps=None, num_stages=None)


def prepare(
    q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, k_buffer: torch.Tensor,
    v_buffer: torch.Tensor, qo_indptr: torch.Tensor, kv_indptr: torch.Tensor,
    kv_indices: torch.Tensor,
) -> Callable[[], torch.Tensor]:  # fmt: skip
    """The output buffer, max_len_extend and the grid, outside the timed call."""
    return _prepare(CONFIG, q, k, v, k_buffer, v_buffer, qo_indptr, kv_indptr, kv_indices)


def extend_attention(
    q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, k_buffer: torch.Tensor,
    v_buffer: torch.Tensor, qo_indptr: torch.Tensor, kv_indptr: torch.Tensor,
    kv_indices: torch.Tensor,
) -> torch.Tensor:  # fmt: skip
    return prepare(q, k, v, k_buffer, v_buffer, qo_indptr, kv_indptr, kv_indices)()
