"""vLLM's Triton W4A16 GEMM with vLLM's own CUDA launch (`_triton_w4a16_gemm_impl`, as
TritonW4A16LinearKernel runs it): 32 x 64 x 32 tiles up to 32 rows, 64 x 64 x 32 up to 64,
128 x 128 x 32 above, BLOCK_K clamped to the group size, Triton's default 4 warps and 3
stages (a size rule in the launcher; no autotuner); the output allocated outside the timed
call."""

from __future__ import annotations

from collections.abc import Callable

import torch

from foreign.vllm_w4a16_gemm.launcher import W4A16GemmConfig
from foreign.vllm_w4a16_gemm.launcher import prepare as _prepare

CONFIG = W4A16GemmConfig(block_m=None, block_n=None, block_k=None, num_warps=None, num_stages=None)


def prepare(
    x: torch.Tensor, qweight: torch.Tensor, scales: torch.Tensor, qzeros: torch.Tensor | None
) -> Callable[[], torch.Tensor]:
    """The [tokens, n] output, outside the timed call."""
    return _prepare(CONFIG, x, qweight, scales, qzeros)


def w4a16_gemm(
    x: torch.Tensor, qweight: torch.Tensor, scales: torch.Tensor, qzeros: torch.Tensor | None
) -> torch.Tensor:
    return prepare(x, qweight, scales, qzeros)()
