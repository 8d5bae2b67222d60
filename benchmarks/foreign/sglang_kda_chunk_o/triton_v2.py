"""triton_v2 — triton_v1 with block_k None (launched as 32) -> 64 (tile_k x2) (catalog move of grow-gemm-tiles-for-operand-reuse).

A copy of triton_v1 with only knob values changed (the catalog designer); triton_v1's notes follow.

SGLang's KDA chunk output with the first configuration of its autotune list: 32-deep key
steps, 64 output columns per program, 2 warps, 2 stages; the chunk index pairs and the
output buffer made outside the timed call.
"""

from __future__ import annotations

from collections.abc import Callable

import torch

from foreign.sglang_kda_chunk_o.launcher import KdaChunkOConfig
from foreign.sglang_kda_chunk_o.launcher import prepare as _prepare

CONFIG = KdaChunkOConfig(block_k=64, block_v=None, num_warps=None, num_stages=None)


def prepare(
    q: torch.Tensor, v: torch.Tensor, g: torch.Tensor, aqk: torch.Tensor, h: torch.Tensor,
    cu_seqlens: torch.Tensor, chunk: int, scale: float,
) -> Callable[[], torch.Tensor]:  # fmt: skip
    """The chunk index pairs, the output buffer and the grid, outside the timed call."""
    return _prepare(CONFIG, q, v, g, aqk, h, cu_seqlens, chunk, scale)


def kda_chunk_o(
    q: torch.Tensor, v: torch.Tensor, g: torch.Tensor, aqk: torch.Tensor, h: torch.Tensor,
    cu_seqlens: torch.Tensor, chunk: int, scale: float,
) -> torch.Tensor:  # fmt: skip
    return prepare(q, v, g, aqk, h, cu_seqlens, chunk, scale)()
