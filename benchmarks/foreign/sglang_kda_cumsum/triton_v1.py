"""SGLang's per-channel chunk-local cumsum with the first configuration of its autotune
list: one program per (32 channels, 64-token chunk, head), 2 warps, one 64 x 64 by 64 x 32
fp32 tl.dot; varlen chunk indices and the output made outside the timed call."""

from __future__ import annotations

from collections.abc import Callable

import torch

from foreign.sglang_kda_cumsum.launcher import KdaCumsumConfig
from foreign.sglang_kda_cumsum.launcher import prepare as _prepare

CONFIG = KdaCumsumConfig(block_s=None, num_warps=None)


def prepare(g: torch.Tensor, cu_seqlens: torch.Tensor, chunk: int) -> Callable[[], torch.Tensor]:
    """The (sequence, chunk) index pairs and the fp32 output, outside the timed call."""
    return _prepare(CONFIG, g, cu_seqlens, chunk)


def kda_chunk_cumsum(g: torch.Tensor, cu_seqlens: torch.Tensor, chunk: int) -> torch.Tensor:
    return prepare(g, cu_seqlens, chunk)()
