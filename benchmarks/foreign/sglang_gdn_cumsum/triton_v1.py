"""SGLang's chunk-local gate cumsum with SGLang's own launch: one program per (64-token
chunk, head), 8 warps, 3 stages (no loop), varlen chunk indices built outside the timed
call."""

from __future__ import annotations

from collections.abc import Callable

import torch

from foreign.sglang_gdn_cumsum.launcher import GdnCumsumConfig
from foreign.sglang_gdn_cumsum.launcher import prepare as _prepare

CONFIG = GdnCumsumConfig(num_warps=None)


def prepare(g: torch.Tensor, cu_seqlens: torch.Tensor, chunk: int) -> Callable[[], torch.Tensor]:
    """The (sequence, chunk) index pairs and the fp32 output, outside the timed call."""
    return _prepare(CONFIG, g, cu_seqlens, chunk)


def chunk_local_cumsum(g: torch.Tensor, cu_seqlens: torch.Tensor, chunk: int) -> torch.Tensor:
    return prepare(g, cu_seqlens, chunk)()
