"""vLLM's Triton W4A16 GEMM (`triton_w4a16_gemm`, as TritonW4A16LinearKernel calls it in every
linear layer of a compressed-tensors int4 weight-only model): inputs, fp32 reference, torch
baseline.

x is [tokens, k] in the spec's dtype.  The weight W [k, n] is stored as the kernel reads it
after vLLM's weight processing: 4-bit values, eight consecutive columns per int32 in GPTQ's
sequential order (nibble i of word j holds column 8 j + i), qweight [k, n / 8]; per group of
`group` rows a scale, scales [k / group, n] in the spec's dtype; the zero point is either the
constant 8 (uint4b8, symmetric: qzeros None) or 4-bit values packed the same way, qzeros
[k / group, n / 8] (uint4).  W[r, c] = (q[r, c] - z[r / group, c]) * s[r / group, c]; the
output is x @ W in the spec's dtype."""

from __future__ import annotations

import torch

ZP_BIAS = 8


def pack_gptq(values: torch.Tensor) -> torch.Tensor:
    """[rows, cols] 4-bit values -> [rows, cols / 8] int32 words, nibble i = column 8 j + i."""
    rows, cols = values.shape
    v = values.view(rows, cols // 8, 8).to(torch.int64)
    words = torch.zeros(rows, cols // 8, dtype=torch.int64, device=values.device)
    for i in range(8):
        words |= (v[:, :, i] & 0xF) << (4 * i)
    return torch.where(words >= 2**31, words - 2**32, words).to(torch.int32)


def unpack_gptq(words: torch.Tensor) -> torch.Tensor:
    """The inverse of `pack_gptq`: [rows, cols / 8] int32 -> [rows, cols] values 0..15."""
    rows, packed = words.shape
    nibbles = torch.stack([(words >> (4 * i)) & 0xF for i in range(8)], dim=-1)
    return nibbles.reshape(rows, packed * 8)


def make_inputs(
    tokens: int, k: int, n: int, group: int, *, dtype: torch.dtype,
    device: str, seed: int | None = None,
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor | None]:  # fmt: skip
    """Unit-variance activations; uniform 4-bit weights around the constant zero point 8
    (uint4b8, as the trials' checkpoint; qzeros None); per-group scales around 0.01 (a weight
    of unit-ish variance over k terms keeps the outputs O(1))."""
    if k % group or n % 8:
        raise ValueError("k must be a multiple of the group and n of 8")
    gen = torch.Generator(device="cpu")
    gen.manual_seed(seed if seed is not None else int(torch.randint(0, 2**31 - 1, (1,))))
    x = torch.randn(tokens, k, generator=gen)
    q = torch.randint(0, 16, (k, n), generator=gen)
    s = (torch.rand(k // group, n, generator=gen) + 0.5) * (0.5 / (k**0.5 * 4.0))
    return (
        x.to(dtype=dtype, device=device),
        pack_gptq(q).to(device),
        s.to(dtype=dtype, device=device),
        None,
    )


def _zeros(
    qweight: torch.Tensor, scales: torch.Tensor, qzeros: torch.Tensor | None
) -> torch.Tensor:
    """The [k / group, n] zero points, unpacked or the constant 8."""
    if qzeros is None:
        return torch.full(scales.shape, ZP_BIAS, dtype=torch.int64, device=qweight.device)
    return unpack_gptq(qzeros)


def dequantize(
    qweight: torch.Tensor, scales: torch.Tensor, qzeros: torch.Tensor | None
) -> torch.Tensor:
    """W [k, n] in fp32 from the packed weight, its per-group scales and zero points."""
    group = qweight.shape[0] // scales.shape[0]
    q = unpack_gptq(qweight).float()
    z = _zeros(qweight, scales, qzeros).float().repeat_interleave(group, dim=0)
    return (q - z) * scales.float().repeat_interleave(group, dim=0)


def reference(
    x: torch.Tensor, qweight: torch.Tensor, scales: torch.Tensor, qzeros: torch.Tensor | None
) -> torch.Tensor:
    return (x.float() @ dequantize(qweight, scales, qzeros)).to(x.dtype)


def torch_w4a16_gemm(
    x: torch.Tensor, qweight: torch.Tensor, scales: torch.Tensor, qzeros: torch.Tensor | None
) -> torch.Tensor:
    """The same product by torch: the weight unpacked and dequantized in the input dtype, then
    one dense matmul (cuBLAS)."""
    group = qweight.shape[0] // scales.shape[0]
    q = unpack_gptq(qweight)
    z = _zeros(qweight, scales, qzeros).repeat_interleave(group, dim=0)
    w = (q - z).to(x.dtype) * scales.repeat_interleave(group, dim=0)
    return x @ w
