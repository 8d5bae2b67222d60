"""Inputs, reference and torch baseline for GemLite's reverse split-K GEMV (A16W4, group-wise
asymmetric 4-bit weights as HQQ quantizes them and GemLiteLinear packs them)."""

from __future__ import annotations

import torch

PER_WORD = 8
QMAX = 15


def pack_down_k(q: torch.Tensor) -> torch.Tensor:
    """[k, n] values in 0..15 -> [k / 8, n] int32, value k at bits 4 (k % 8) of row k // 8
    (GemLite's packing over K for 32-bit words, as its kernel unpacks it)."""
    k, n = q.shape
    q = q.to(torch.int64).reshape(k // PER_WORD, PER_WORD, n)
    shifts = (4 * torch.arange(PER_WORD, dtype=torch.int64)).reshape(1, PER_WORD, 1)
    words = (q << shifts).sum(dim=1)
    return torch.where(words >= 2**31, words - 2**32, words).to(torch.int32)


def unpack_down_k(w_q: torch.Tensor) -> torch.Tensor:
    """The inverse of `pack_down_k`: [k / 8, n] int32 -> [k, n] int64 values in 0..15."""
    shifts = (4 * torch.arange(PER_WORD, device=w_q.device, dtype=torch.int64)).reshape(1, -1, 1)
    vals = (w_q.to(torch.int64).unsqueeze(1) >> shifts) & QMAX
    return vals.reshape(-1, w_q.shape[1])


def make_inputs(
    tokens: int, k: int, n: int, group: int, *, dtype: torch.dtype, device: str,
    seed: int | None = None,
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor, int]:  # fmt: skip
    """Unit activations [tokens, k]; a weight [n, k] at 1/sqrt(k) quantized per group of
    `group` inputs of an output channel by min-max to 0..15 (HQQ's asymmetric 4-bit without
    its refinement), passed as GemLite keeps it: packed [k / 8, n] int32, scales [k / group,
    n] and shifts -zero x scale [k / group, n] in the activations' dtype (fma_mode)."""
    gen = torch.Generator(device="cpu")
    gen.manual_seed(0 if seed is None else seed)
    x = torch.randn(tokens, k, generator=gen)
    w = (torch.randn(n, k, generator=gen) / k**0.5).reshape(n, k // group, group)
    lo, hi = w.amin(dim=2, keepdim=True), w.amax(dim=2, keepdim=True)
    scale = ((hi - lo) / QMAX).clamp_min(1e-8)
    zero = -lo / scale
    q = (w / scale + zero).round().clamp(0, QMAX).reshape(n, k)
    scales = scale.reshape(n, k // group).t().contiguous()
    zeros = (-zero * scale).reshape(n, k // group).t().contiguous()
    return (
        x.to(dtype).to(device),
        pack_down_k(q.t().contiguous()).to(device),
        scales.to(dtype).to(device),
        zeros.to(dtype).to(device),
        group,
    )


def dequantize(
    w_q: torch.Tensor, scales: torch.Tensor, zeros: torch.Tensor, group: int
) -> torch.Tensor:
    """[k, n] weights q x scale + shift, each rounded once to the scales' dtype (the
    kernel's fp16 fma)."""
    q = unpack_down_k(w_q).to(torch.float32)
    s = scales.to(torch.float32).repeat_interleave(group, dim=0)
    z = zeros.to(torch.float32).repeat_interleave(group, dim=0)
    return (q * s + z).to(scales.dtype)


def reference(
    x: torch.Tensor, w_q: torch.Tensor, scales: torch.Tensor, zeros: torch.Tensor, group: int
) -> torch.Tensor:
    """The weights dequantized as the kernel does it, the product in fp64, one rounding to
    the activations' dtype."""
    w = dequantize(w_q, scales, zeros, group)
    return (x.to(torch.float64) @ w.to(torch.float64)).to(x.dtype)


def torch_gemv(
    x: torch.Tensor, w_q: torch.Tensor, scales: torch.Tensor, zeros: torch.Tensor, group: int
) -> torch.Tensor:
    """The same product by torch: the weight unpacked and dequantized every call, then one
    dense matmul in the activations' dtype (GemLite's own fallback outside Triton does the
    same)."""
    return x @ dequantize(w_q, scales, zeros, group)
