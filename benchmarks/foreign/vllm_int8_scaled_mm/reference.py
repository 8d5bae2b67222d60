"""vLLM's Triton W8A8 scaled GEMM (`triton_scaled_mm`, as TritonInt8ScaledMMLinearKernel calls
it in every linear layer of a compressed-tensors W8A8 int8 model): inputs, reference, torch
baseline.

a [tokens, k] int8 holds the activations quantized per token (symmetric, round to nearest,
absmax / 127 fp32 scales scale_a [tokens, 1], as vLLM's dynamic `scaled_int8_quant` makes
them); b [k, n] int8 is the transposed view of the checkpoint's [n, k] weight rows, quantized
per output channel (absmax / 127 fp32 scales scale_b [n, 1]); the output is
scale_a * scale_b^T * (a @ b) in the spec's dtype (C's dtype: a and b are int8 whatever it
is)."""

from __future__ import annotations

import torch

IMAX = 127.0


def _quantize_rows(x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """Symmetric int8 per row: absmax / 127 fp32 scales, values rounded to nearest."""
    scale = (x.abs().amax(dim=1, keepdim=True) / IMAX).clamp_min(1e-10)
    q = (x / scale).round().clamp(-IMAX, IMAX).to(torch.int8)
    return q, scale.to(torch.float32)


def make_inputs(
    tokens: int, k: int, n: int, *, dtype: torch.dtype, device: str, seed: int | None = None
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor, torch.dtype]:
    """Unit activations quantized per token, weights at 1/sqrt(k) quantized per output
    channel and passed as the [k, n] transposed view of their [n, k] rows (the layout
    TritonInt8ScaledMMLinearKernel keeps); the output dtype is the spec's dtype."""
    gen = torch.Generator(device="cpu")
    gen.manual_seed(0 if seed is None else seed)
    x = torch.randn(tokens, k, generator=gen)
    w = torch.randn(n, k, generator=gen) / k**0.5
    a, scale_a = _quantize_rows(x)
    w_q, scale_b = _quantize_rows(w)
    return (
        a.to(device),
        w_q.to(device).t(),
        scale_a.to(device),
        scale_b.to(device),
        dtype,
    )


def reference(
    a: torch.Tensor, b: torch.Tensor, scale_a: torch.Tensor, scale_b: torch.Tensor,
    out_dtype: torch.dtype,
) -> torch.Tensor:  # fmt: skip
    """The integer product exactly (fp64: sums of k products of at most 127^2 stay below
    2^53), the two scales in fp64, one rounding to the output dtype."""
    acc = a.to(torch.float64) @ b.to(torch.float64)
    return (scale_a.to(torch.float64) * acc * scale_b.to(torch.float64).T).to(out_dtype)


def torch_int8_scaled_mm(
    a: torch.Tensor, b: torch.Tensor, scale_a: torch.Tensor, scale_b: torch.Tensor,
    out_dtype: torch.dtype,
) -> torch.Tensor:  # fmt: skip
    """torch's int8 GEMM (`torch._int_mm`, s8 x s8 -> s32; it needs more than 16 rows on CUDA,
    so fewer are padded with zero rows), then the two scales in fp32 and one cast, as
    vLLM's torch fallback for the same layer does it."""
    m = a.shape[0]
    a_in = a if m > 16 else torch.cat([a, a.new_zeros(17 - m, a.shape[1])])
    acc = torch._int_mm(a_in, b)[:m]
    return (scale_a * acc.to(torch.float32) * scale_b.T).to(out_dtype)
