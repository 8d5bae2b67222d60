"""Block-wise fp8 W8A8 GEMM (SGLang's `w8a8_block_fp8_matmul_triton`): inputs, fp32
reference, torch baseline.  A [M, K] and B [N, K] are e4m3, As [M, K / 128] the activation
scales per token and 128-column group, Bs [N / 128, K / 128] the weight scales per 128 x 128
block; the output is (A * As) (B * Bs)^T in the spec's dtype."""

from __future__ import annotations

from collections.abc import Callable

import torch

FP8 = torch.float8_e4m3fn
BLOCK = 128


def _cdiv(a: int, b: int) -> int:
    return -(-a // b)


def make_inputs(
    m: int, n: int, k: int, *, dtype: torch.dtype, device: str, seed: int | None = None
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor, torch.dtype]:
    """Unit activations quantized per token and 128-column group, weights at 1/sqrt(k)
    quantized per 128 x 128 block (absmax / 448 scales, as the checkpoints and SGLang's
    activation quantization make them); the output dtype is the spec's dtype."""
    fmax = torch.finfo(FP8).max
    return block_quantized_inputs(
        m, n, k, dtype=dtype, device=device, seed=seed, qmax=fmax,
        to_quantized=lambda x: x.clamp(-fmax, fmax).to(FP8),
    )  # fmt: skip


def block_quantized_inputs(
    m: int,
    n: int,
    k: int,
    *,
    dtype: torch.dtype,
    device: str,
    seed: int | None,
    qmax: float,
    to_quantized: Callable[[torch.Tensor], torch.Tensor],
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor, torch.dtype]:
    """A [M, K] quantized per token and 128-column group and B [N, K] per 128 x 128 block,
    with absmax / `qmax` scales; `to_quantized` turns the scaled values into the 8-bit type
    (the int8 block GEMM shares this with a rounding conversion)."""
    gen = torch.Generator(device="cpu")
    gen.manual_seed(seed if seed is not None else int(torch.randint(0, 2**31 - 1, (1,))))
    kb, nb = _cdiv(k, BLOCK), _cdiv(n, BLOCK)
    x = torch.randn(m, k, generator=gen)
    xp = torch.nn.functional.pad(x, (0, kb * BLOCK - k)).view(m, kb, BLOCK)
    a_s = xp.abs().amax(-1).clamp_min(1e-10) / qmax
    a = to_quantized(xp / a_s[..., None]).view(m, kb * BLOCK)[:, :k]
    w = torch.randn(n, k, generator=gen) / k**0.5
    wp = torch.nn.functional.pad(w, (0, kb * BLOCK - k, 0, nb * BLOCK - n))
    wb = wp.view(nb, BLOCK, kb, BLOCK)
    b_s = wb.abs().amax(dim=(1, 3)).clamp_min(1e-10) / qmax
    b = to_quantized(wb / b_s[:, None, :, None]).view(nb * BLOCK, kb * BLOCK)[:n, :k]
    return (
        a.contiguous().to(device),
        a_s.to(device),
        b.contiguous().to(device),
        b_s.to(device),
        dtype,
    )


def _dequantized(
    a: torch.Tensor, a_s: torch.Tensor, b: torch.Tensor, b_s: torch.Tensor, acc: torch.dtype
) -> tuple[torch.Tensor, torch.Tensor]:
    k = a.shape[1]
    n = b.shape[0]
    af = a.float() * a_s.repeat_interleave(BLOCK, dim=1)[:, :k]
    bs = b_s.repeat_interleave(BLOCK, dim=0)[:n].repeat_interleave(BLOCK, dim=1)[:, :k]
    return af.to(acc), (b.float() * bs).to(acc)


def reference(
    a: torch.Tensor, a_s: torch.Tensor, b: torch.Tensor, b_s: torch.Tensor, out_dtype: torch.dtype
) -> torch.Tensor:
    af, bf = _dequantized(a, a_s, b, b_s, torch.float32)
    return af @ bf.T


def torch_dequant_matmul(
    a: torch.Tensor, a_s: torch.Tensor, b: torch.Tensor, b_s: torch.Tensor, out_dtype: torch.dtype
) -> torch.Tensor:
    """Both operands dequantized to the output dtype, then torch's matmul (what a model
    does without a block-quantized kernel)."""
    af, bf = _dequantized(a, a_s, b, b_s, out_dtype)
    return af @ bf.T
