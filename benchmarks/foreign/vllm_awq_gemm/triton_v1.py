"""vLLM's AWQ int4 GEMM with vLLM's own launch: 32 x 32 x 32 tiles, K split 8 ways (the pack
factor), Triton's default 4 warps and 3 stages, torch summing the splits; the split buffer
allocated outside the timed call."""

from __future__ import annotations

from collections.abc import Callable

import torch

from foreign.vllm_awq_gemm.launcher import AwqGemmConfig
from foreign.vllm_awq_gemm.launcher import prepare as _prepare

CONFIG = AwqGemmConfig(
    block_m=None, block_n=None, block_k=None, split_k=None, num_warps=None, num_stages=None
)


def prepare(
    x: torch.Tensor, qweight: torch.Tensor, scales: torch.Tensor, qzeros: torch.Tensor
) -> Callable[[], torch.Tensor]:
    """The [split, tokens, n] buffer of partial products, outside the timed call."""
    return _prepare(CONFIG, x, qweight, scales, qzeros)


def awq_gemm(
    x: torch.Tensor, qweight: torch.Tensor, scales: torch.Tensor, qzeros: torch.Tensor
) -> torch.Tensor:
    return prepare(x, qweight, scales, qzeros)()
