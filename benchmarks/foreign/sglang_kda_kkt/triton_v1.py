"""SGLang's Kimi Delta Attention intra-chunk matrices with SGLang's own launch: 16-token
sub-chunks; the off-diagonal blocks in 16 x 16 tl.dots over 32-deep key slices with 1 warp
and 2 stages, the diagonal blocks column by column with 1 warp (the first configuration of
each kernel's autotune list, the decorators dropped); varlen chunk indices and the
zero-filled fp32 outputs made outside the timed call."""

from __future__ import annotations

from collections.abc import Callable

import torch

from foreign.sglang_kda_kkt.launcher import KdaKktConfig
from foreign.sglang_kda_kkt.launcher import prepare as _prepare

CONFIG = KdaKktConfig(
    sub_chunk=None, inter_block_k=None, inter_warps=None, inter_stages=None,
    intra_warps=None, intra_stages=None,
)  # fmt: skip


def prepare(
    q: torch.Tensor, k: torch.Tensor, g: torch.Tensor, beta: torch.Tensor,
    cu_seqlens: torch.Tensor, chunk: int, scale: float,
) -> Callable[[], tuple[torch.Tensor, torch.Tensor]]:  # fmt: skip
    """The (sequence, chunk) index pairs and the zero-filled A and Aqk, outside the timed
    call."""
    return _prepare(CONFIG, q, k, g, beta, cu_seqlens, chunk, scale)


def chunk_kda_kkt(
    q: torch.Tensor, k: torch.Tensor, g: torch.Tensor, beta: torch.Tensor,
    cu_seqlens: torch.Tensor, chunk: int, scale: float,
) -> tuple[torch.Tensor, torch.Tensor]:  # fmt: skip
    return prepare(q, k, g, beta, cu_seqlens, chunk, scale)()
