"""Inputs, reference and torch baseline for Unsloth's fused small-M block fp8 linear: x [M, K]
unquantized activations in the spec's dtype, w [N, K] e4m3 weights with w_s [N / 128, K / 128]
fp32 scales per 128 x 128 block (a block-fp8 checkpoint's weight and weight_scale_inv); the
output x_q w^T in x's dtype, where x_q is x quantized per row and 128-column block as the
kernel does it (absmax / 448 scales, e4m3 values)."""

from __future__ import annotations

import torch

FP8 = torch.float8_e4m3fn
BLOCK = 128
FP8_MAX = 448.0


def _cdiv(a: int, b: int) -> int:
    return -(-a // b)


def make_inputs(
    tokens: int, k: int, n: int, *, dtype: torch.dtype, device: str, seed: int | None = None
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """Unit activations [tokens, k] in the spec's dtype; a weight [n, k] at 1/sqrt(k)
    quantized per 128 x 128 block (absmax / 448 fp32 scales, as the checkpoints store their
    weight_scale_inv) to e4m3.  k must be a multiple of 128 (Unsloth's condition)."""
    gen = torch.Generator(device="cpu")
    gen.manual_seed(0 if seed is None else seed)
    x = torch.randn(tokens, k, generator=gen)
    nb, kb = _cdiv(n, BLOCK), k // BLOCK
    w = torch.randn(n, k, generator=gen) / k**0.5
    wb = torch.nn.functional.pad(w, (0, 0, 0, nb * BLOCK - n)).view(nb, BLOCK, kb, BLOCK)
    w_s = wb.abs().amax(dim=(1, 3)).clamp_min(1e-10) / FP8_MAX
    w_q = (wb / w_s[:, None, :, None]).clamp(-FP8_MAX, FP8_MAX).to(FP8)
    return (
        x.to(dtype).to(device),
        w_q.view(nb * BLOCK, k)[:n].contiguous().to(device),
        w_s.contiguous().to(device),
    )


def quantize_activations(x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """x per row and 128-column block as the kernel quantizes it: fp32 absmax / 448 (1 where
    the block is zero), the scaled values rounded to e4m3; (values in fp32, scales [M, K /
    128])."""
    m, k = x.shape
    xb = x.float().view(m, k // BLOCK, BLOCK)
    a_s = xb.abs().amax(-1) / FP8_MAX
    a_s = torch.where(a_s == 0, torch.ones_like(a_s), a_s)
    a = (xb / a_s[..., None]).to(FP8).float()
    return a.view(m, k), a_s


def _dequantized_weight(w: torch.Tensor, w_s: torch.Tensor, acc: torch.dtype) -> torch.Tensor:
    n, k = w.shape
    s = w_s.float().repeat_interleave(BLOCK, dim=0)[:n].repeat_interleave(BLOCK, dim=1)[:, :k]
    return (w.float() * s).to(acc)


def reference(x: torch.Tensor, w: torch.Tensor, w_s: torch.Tensor) -> torch.Tensor:
    """The activations quantized as the kernel does it, both operands dequantized, the
    product in fp64, one rounding to x's dtype."""
    a, a_s = quantize_activations(x)
    af = (a * a_s.repeat_interleave(BLOCK, dim=1)).double()
    return (af @ _dequantized_weight(w, w_s, torch.float64).T).to(x.dtype)


def torch_dequant_linear(x: torch.Tensor, w: torch.Tensor, w_s: torch.Tensor) -> torch.Tensor:
    """The same product by torch (Unsloth's own fallback quantizes the activations the same
    way before its block GEMM): the activations quantized per row and 128-column block and
    dequantized, the weight dequantized, both in x's dtype every call, then torch's
    matmul."""
    a, a_s = quantize_activations(x)
    af = (a * a_s.repeat_interleave(BLOCK, dim=1)).to(x.dtype)
    return af @ _dequantized_weight(w, w_s, x.dtype).T
