"""SGLang's Mamba-2 dt cumsum with SGLang's own launch: the kernel's default 16 heads per
program (no autotune), the whole chunk as one tile, Triton's default 4 warps; softplus on,
dt clamped to [0, inf) as MambaMixer2 asks."""

from __future__ import annotations

from collections.abc import Callable

import torch

from foreign.sglang_ssd_chunk_cumsum.launcher import SsdChunkCumsumConfig
from foreign.sglang_ssd_chunk_cumsum.launcher import prepare as _prepare

CONFIG = SsdChunkCumsumConfig(block_h=None, num_warps=None)


def prepare(
    dt: torch.Tensor, a: torch.Tensor, dt_bias: torch.Tensor, chunk: int
) -> Callable[[], tuple[torch.Tensor, torch.Tensor]]:
    """The two fp32 output buffers and the grid, outside the timed call."""
    return _prepare(CONFIG, dt, a, dt_bias, chunk)


def chunk_cumsum(
    dt: torch.Tensor, a: torch.Tensor, dt_bias: torch.Tensor, chunk: int
) -> tuple[torch.Tensor, torch.Tensor]:
    return prepare(dt, a, dt_bias, chunk)()
