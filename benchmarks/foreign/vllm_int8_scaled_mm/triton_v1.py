"""vLLM's Triton W8A8 scaled GEMM with vLLM's own CUDA launch (`triton_scaled_mm`'s heuristic,
as TritonInt8ScaledMMLinearKernel runs it): by the rows rounded up to a power of two, 64 x 64
x 256 tiles up to 32 rows (64 x 128 x 256 where N >= 8192), 64 x 64 x 256 up to 64, 64 x 128
x 128 up to 128, 128 x 128 x 128 above, Triton's default 4 warps and 3 stages, tensor
descriptors off (a size rule in the launcher; no autotuner); the output allocated outside
the timed call."""

from __future__ import annotations

from collections.abc import Callable

import torch

from foreign.vllm_int8_scaled_mm.launcher import ScaledMMConfig
from foreign.vllm_int8_scaled_mm.launcher import prepare as _prepare

CONFIG = ScaledMMConfig(block_m=None, block_n=None, block_k=None, num_warps=None, num_stages=None)


def prepare(
    a: torch.Tensor, b: torch.Tensor, scale_a: torch.Tensor, scale_b: torch.Tensor,
    out_dtype: torch.dtype,
) -> Callable[[], torch.Tensor]:  # fmt: skip
    """The [tokens, n] output, outside the timed call."""
    return _prepare(CONFIG, a, b, scale_a, scale_b, out_dtype)


def int8_scaled_mm(
    a: torch.Tensor, b: torch.Tensor, scale_a: torch.Tensor, scale_b: torch.Tensor,
    out_dtype: torch.dtype,
) -> torch.Tensor:  # fmt: skip
    return prepare(a, b, scale_a, scale_b, out_dtype)()
