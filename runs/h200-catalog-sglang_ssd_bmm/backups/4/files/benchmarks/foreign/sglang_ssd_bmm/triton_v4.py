"""triton_v4 — triton_v3 with block_m 32 -> 64 (tile_m x2) (catalog move of fill-tensor-core-tile-m).

A copy of triton_v3 with only knob values changed (the catalog designer); triton_v3's notes follow.

triton_v3 — triton_v2 with block_m None (launched as 16) -> 32 (tile_m x2) (catalog move of fill-tensor-core-tile-m).

A copy of triton_v2 with only knob values changed (the catalog designer); triton_v2's notes follow.

triton_v2 — triton_v1 with num_stages None (launched as 3) -> 4 (pipeline_stages +1) (catalog move of triton-num-stages-software-pipelining).

A copy of triton_v1 with only knob values changed (the catalog designer); triton_v1's notes follow.

SGLang's Mamba-2 chunk matmul with SGLang's own launch: the kernel's default 16 x 16 x 16
tl.dot tiles, Triton's default 4 warps and 3 stages, fp32 output, packed sequences masked.
"""

from __future__ import annotations

from collections.abc import Callable

import torch

from foreign.sglang_ssd_bmm.launcher import SsdBmmConfig
from foreign.sglang_ssd_bmm.launcher import prepare as _prepare

CONFIG = SsdBmmConfig(block_m=64, block_n=None, block_k=None, num_warps=None, num_stages=4)


def prepare(
    c: torch.Tensor, b: torch.Tensor, seq_idx: torch.Tensor, chunk: int
) -> Callable[[], torch.Tensor]:
    """The fp32 CB buffer and the grid, outside the timed call."""
    return _prepare(CONFIG, c, b, seq_idx, chunk)


def chunk_bmm(c: torch.Tensor, b: torch.Tensor, seq_idx: torch.Tensor, chunk: int) -> torch.Tensor:
    return prepare(c, b, seq_idx, chunk)()
