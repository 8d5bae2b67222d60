"""SGLang's chunked gated-delta-rule output with SGLang's own launch: BT 64 (for a prefill
of 64 tokens or more), BK 128, BV 64, 4 warps, 2 stages, varlen chunk indices."""

from __future__ import annotations

from collections.abc import Callable

import torch

from foreign.sglang_gdn_chunk_o.launcher import GdnChunkOConfig
from foreign.sglang_gdn_chunk_o.launcher import prepare as _prepare

CONFIG = GdnChunkOConfig(block_k=None, block_v=None, num_warps=None, num_stages=None)


def prepare(
    q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, h: torch.Tensor, g: torch.Tensor,
    cu_seqlens: torch.Tensor, chunk: int,
) -> Callable[[], torch.Tensor]:  # fmt: skip
    """The output buffer, the chunk indices and the grid, outside the timed call."""
    return _prepare(CONFIG, q, k, v, h, g, cu_seqlens, chunk)


def chunk_o(
    q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, h: torch.Tensor, g: torch.Tensor,
    cu_seqlens: torch.Tensor, chunk: int,
) -> torch.Tensor:  # fmt: skip
    return prepare(q, k, v, h, g, cu_seqlens, chunk)()
