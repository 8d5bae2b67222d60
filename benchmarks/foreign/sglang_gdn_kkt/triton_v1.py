"""SGLang's per-chunk scaled K K^T with SGLang's own launch: one program per (64-token
chunk, value head), 64-deep tl.dot steps over the key dimension, 8 warps, 3 stages, varlen
chunk indices and the fp32 output made outside the timed call."""

from __future__ import annotations

from collections.abc import Callable

import torch

from foreign.sglang_gdn_kkt.launcher import GdnKktConfig
from foreign.sglang_gdn_kkt.launcher import prepare as _prepare

CONFIG = GdnKktConfig(block_k=None, num_warps=None, num_stages=None)


def prepare(
    k: torch.Tensor, beta: torch.Tensor, g: torch.Tensor, cu_seqlens: torch.Tensor, chunk: int
) -> Callable[[], torch.Tensor]:
    """The (sequence, chunk) index pairs and the fp32 output, outside the timed call."""
    return _prepare(CONFIG, k, beta, g, cu_seqlens, chunk)


def chunk_scaled_dot_kkt(
    k: torch.Tensor, beta: torch.Tensor, g: torch.Tensor, cu_seqlens: torch.Tensor, chunk: int
) -> torch.Tensor:
    return prepare(k, beta, g, cu_seqlens, chunk)()
