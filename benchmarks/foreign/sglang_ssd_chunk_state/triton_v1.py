"""SGLang's Mamba-2 chunk states with SGLang's own launch: the kernel's default 16 x 16 x 16
tl.dot tiles (headdim x dstate x tokens; no autotune), Triton's default 4 warps and 3
stages, fp32 states, packed sequences masked."""

from __future__ import annotations

from collections.abc import Callable

import torch

from foreign.sglang_ssd_chunk_state.launcher import SsdChunkStateConfig
from foreign.sglang_ssd_chunk_state.launcher import prepare as _prepare

CONFIG = SsdChunkStateConfig(
    block_m=None, block_n=None, block_k=None, num_warps=None, num_stages=None
)


def prepare(
    x: torch.Tensor, b: torch.Tensor, dt: torch.Tensor, da_cumsum: torch.Tensor,
    seq_idx: torch.Tensor,
) -> Callable[[], torch.Tensor]:  # fmt: skip
    """The fp32 states buffer and the grid, outside the timed call."""
    return _prepare(CONFIG, x, b, dt, da_cumsum, seq_idx)


def chunk_state(
    x: torch.Tensor, b: torch.Tensor, dt: torch.Tensor, da_cumsum: torch.Tensor,
    seq_idx: torch.Tensor,
) -> torch.Tensor:  # fmt: skip
    return prepare(x, b, dt, da_cumsum, seq_idx)()
