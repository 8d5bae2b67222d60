"""FlagGems' top-k sparse attention with an attention sink, with FlagGems' launch: 64 KV rows
per step, 8 warps, Triton's default 3 stages."""

from __future__ import annotations

from collections.abc import Callable

import torch

from foreign.flaggems_sparse_attn_sink.launcher import SparseAttnSinkConfig
from foreign.flaggems_sparse_attn_sink.launcher import prepare as _prepare

CONFIG = SparseAttnSinkConfig(block=None, num_warps=None, num_stages=None)


def prepare(
    q: torch.Tensor, kv: torch.Tensor, attn_sink: torch.Tensor, topk_idxs: torch.Tensor
) -> Callable[[], torch.Tensor]:
    """The output buffer, outside the timed call."""
    return _prepare(CONFIG, q, kv, attn_sink, topk_idxs)


def sparse_attn_sink(
    q: torch.Tensor, kv: torch.Tensor, attn_sink: torch.Tensor, topk_idxs: torch.Tensor
) -> torch.Tensor:
    return prepare(q, kv, attn_sink, topk_idxs)()
