"""Block-wise int8 W8A8 GEMM (SGLang's `w8a8_block_int8_matmul`): inputs, fp32 reference,
torch baseline.  A [M, K] and B [N, K] are int8, As [M, K / 128] the activation scales per
token and 128-column group, Bs [N / 128, K / 128] the weight scales per 128 x 128 block; the
output is (A * As) (B * Bs)^T in the spec's dtype."""

from __future__ import annotations

import torch

# The fp32 reference and the torch baseline are the fp8 block GEMM's: the same dequantized
# product, whatever 8-bit type the operands are stored in.
from foreign.sglang_fp8_block_gemm.reference import (
    block_quantized_inputs,
    reference,
    torch_dequant_matmul,
)

__all__ = ["make_inputs", "reference", "torch_dequant_matmul"]

IMAX = 127.0


def make_inputs(
    m: int, n: int, k: int, *, dtype: torch.dtype, device: str, seed: int | None = None
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor, torch.dtype]:
    """Unit activations quantized per token and 128-column group, weights at 1/sqrt(k)
    quantized per 128 x 128 block (absmax / 127 scales, rounded to nearest, as the block-INT8
    checkpoints and SGLang's per-token-group int8 quantization make them); the output dtype
    is the spec's dtype."""
    return block_quantized_inputs(
        m, n, k, dtype=dtype, device=device, seed=seed, qmax=IMAX,
        to_quantized=lambda x: x.round().clamp(-IMAX, IMAX).to(torch.int8),
    )  # fmt: skip
