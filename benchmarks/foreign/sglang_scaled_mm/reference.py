"""Per-token x per-channel scaled fp8 GEMM (SGLang's `triton_scaled_mm`, the W8A8 fp8 linear
of a channel-wise fp8 checkpoint with dynamic per-token activation scales): inputs, fp32
reference, torch baseline.  A [M, K] is e4m3 with a_s [M, 1] fp32, B [K, N] the e4m3 weight
[N, K] viewed transposed with b_s [N, 1] fp32; the output is (A * a_s) (B * b_s^T) in the
spec's dtype."""

from __future__ import annotations

import torch

FP8 = torch.float8_e4m3fn


def make_inputs(
    m: int, n: int, k: int, *, dtype: torch.dtype, device: str, seed: int | None = None
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor, torch.dtype]:
    """Unit activations quantized per token, weights at 1/sqrt(k) quantized per output
    channel (absmax / 448 scales, as the checkpoints and SGLang's dynamic per-token
    quantization make them); the output dtype is the spec's dtype."""
    gen = torch.Generator(device="cpu")
    gen.manual_seed(seed if seed is not None else int(torch.randint(0, 2**31 - 1, (1,))))
    fmax = torch.finfo(FP8).max
    x = torch.randn(m, k, generator=gen)
    a_s = x.abs().amax(-1, keepdim=True).clamp_min(1e-10) / fmax
    a = (x / a_s).clamp(-fmax, fmax).to(FP8)
    w = torch.randn(n, k, generator=gen) / k**0.5
    b_s = w.abs().amax(-1, keepdim=True).clamp_min(1e-10) / fmax
    wq = (w / b_s).clamp(-fmax, fmax).to(FP8)
    return a.to(device), wq.to(device).t(), a_s.to(device), b_s.to(device), dtype


def reference(
    a: torch.Tensor, b: torch.Tensor, a_s: torch.Tensor, b_s: torch.Tensor, out_dtype: torch.dtype
) -> torch.Tensor:
    return (a.float() @ b.float()) * a_s * b_s.T


def torch_dequant_matmul(
    a: torch.Tensor, b: torch.Tensor, a_s: torch.Tensor, b_s: torch.Tensor, out_dtype: torch.dtype
) -> torch.Tensor:
    """Both operands dequantized to the output dtype, then torch's matmul (what a model
    does without an fp8 kernel)."""
    return (a.to(out_dtype) * a_s.to(out_dtype)) @ (b.to(out_dtype) * b_s.T.to(out_dtype))
