"""SGLang's block-wise int8 W8A8 GEMM with SGLang's own launch: its default configuration
without a tuned table (v0.5.9's int8 tables are for A100 and A800 only), 64 x 128 x 128
tiles (N and K tiles the quantization block), row blocks in groups of 32, 4 warps, 3
stages."""

from __future__ import annotations

from collections.abc import Callable

import torch

from foreign.sglang_int8_block_gemm.launcher import Int8BlockGemmConfig
from foreign.sglang_int8_block_gemm.launcher import prepare as _prepare

CONFIG = Int8BlockGemmConfig(
    block_m=None, block_n=None, group_m=None, num_warps=None, num_stages=None
)


def prepare(
    a: torch.Tensor, a_s: torch.Tensor, b: torch.Tensor, b_s: torch.Tensor, out_dtype: torch.dtype
) -> Callable[[], torch.Tensor]:
    """The output buffer and the grid, outside the timed call."""
    return _prepare(CONFIG, a, a_s, b, b_s, out_dtype)


def w8a8_block_int8_matmul(
    a: torch.Tensor, a_s: torch.Tensor, b: torch.Tensor, b_s: torch.Tensor, out_dtype: torch.dtype
) -> torch.Tensor:
    return prepare(a, a_s, b, b_s, out_dtype)()
