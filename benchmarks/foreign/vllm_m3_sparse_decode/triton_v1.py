"""MiniMax M3's Hopper block-sparse GQA decode with vLLM's own launch: the top-k list cut
into the power-of-two chunk count that keeps about 256 split programs (TARGET_GRID, fixed
in `minimax_m3_sparse_attn_decode`; no autotuner or tuned table), 128-token blocks (the
page), 16 rows a program at MiniMax M3's 16 query heads per KV head, Triton's default 4
warps and 3 stages for the split launch and 4 warps for the merge (vLLM passes none), PDL
on Hopper and later as vLLM sets it; the partial buffers, the top-k view and the output
made outside the timed call."""

from __future__ import annotations

from collections.abc import Callable

import torch

from foreign.vllm_m3_sparse_decode.launcher import SparseDecodeConfig
from foreign.vllm_m3_sparse_decode.launcher import prepare as _prepare

CONFIG = SparseDecodeConfig(splits=None, num_warps=None, num_stages=None, merge_warps=None)


def prepare(
    q: torch.Tensor, kv_cache: torch.Tensor, topk: torch.Tensor, block_table: torch.Tensor,
    seq_lens: torch.Tensor, q_len: int, sm_scale: float,
) -> Callable[[], torch.Tensor]:  # fmt: skip
    """The partial buffers, the top-k view and the output, outside the timed call."""
    return _prepare(CONFIG, q, kv_cache, topk, block_table, seq_lens, q_len, sm_scale)


def sparse_decode(
    q: torch.Tensor, kv_cache: torch.Tensor, topk: torch.Tensor, block_table: torch.Tensor,
    seq_lens: torch.Tensor, q_len: int, sm_scale: float,
) -> torch.Tensor:  # fmt: skip
    return prepare(q, kv_cache, topk, block_table, seq_lens, q_len, sm_scale)()
