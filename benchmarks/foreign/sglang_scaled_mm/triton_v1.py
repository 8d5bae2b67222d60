"""SGLang's per-token x per-channel scaled fp8 GEMM with SGLang's own launch: the tile its
`triton_scaled_mm` heuristic picks from M and N ((64, 128, 256) for a decode step of up to
32 tokens through a layer at least 8192 wide, (128, 128, 128) for more than 128 tokens) and
Triton's default 4 warps and 3 stages (SGLang passes none)."""

from __future__ import annotations

from collections.abc import Callable

import torch

from foreign.sglang_scaled_mm.launcher import ScaledMmConfig
from foreign.sglang_scaled_mm.launcher import prepare as _prepare

CONFIG = ScaledMmConfig(block_m=None, block_n=None, block_k=None, num_warps=None, num_stages=None)


def prepare(
    a: torch.Tensor, b: torch.Tensor, a_s: torch.Tensor, b_s: torch.Tensor, out_dtype: torch.dtype
) -> Callable[[], torch.Tensor]:
    """The output buffer and the grid, outside the timed call."""
    return _prepare(CONFIG, a, b, a_s, b_s, out_dtype)


def triton_scaled_mm(
    a: torch.Tensor, b: torch.Tensor, a_s: torch.Tensor, b_s: torch.Tensor, out_dtype: torch.dtype
) -> torch.Tensor:
    return prepare(a, b, a_s, b_s, out_dtype)()
