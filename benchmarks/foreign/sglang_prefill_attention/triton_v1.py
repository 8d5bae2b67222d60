"""SGLang's Triton prefill attention with SGLang's own launch: 128 x 128 query and KV tiles
(on an H200), 8 warps for a 128-wide head, one pipeline stage, causal."""

from __future__ import annotations

from collections.abc import Callable

import torch

from foreign.sglang_prefill_attention.launcher import PrefillAttentionConfig
from foreign.sglang_prefill_attention.launcher import prepare as _prepare

CONFIG = PrefillAttentionConfig(block_m=None, block_n=None, num_warps=None, num_stages=None)


def prepare(
    q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, start_loc: torch.Tensor,
    seq_len: torch.Tensor, max_len: int,
) -> Callable[[], torch.Tensor]:  # fmt: skip
    """The output buffer and the grid, outside the timed call."""
    return _prepare(CONFIG, q, k, v, start_loc, seq_len, max_len)


def prefill_attention(
    q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, start_loc: torch.Tensor,
    seq_len: torch.Tensor, max_len: int,
) -> torch.Tensor:  # fmt: skip
    return prepare(q, k, v, start_loc, seq_len, max_len)()
