"""vLLM's AWQ int4 GEMM (`awq_gemm_triton`, as AWQLinearMethod calls it below 256 tokens):
inputs, fp32 reference, torch baseline.

x is [tokens, k] in the spec's dtype (fp16 for AWQ).  The weight W [k, n] is stored as AWQ
stores it: 4-bit values, eight per int32 along n in AWQ's interleaved order (nibble i of a
word holds column 8 j + (0, 2, 4, 6, 1, 3, 5, 7)[i]), qweight [k, n / 8]; per group of
`group` rows a 4-bit zero point packed the same way, qzeros [k / group, n / 8], and a scale,
scales [k / group, n] in the spec's dtype.  W[r, c] = (q[r, c] - z[r / group, c]) *
s[r / group, c]; the output is x @ W in the spec's dtype."""

from __future__ import annotations

import torch

AWQ_ORDER = (0, 2, 4, 6, 1, 3, 5, 7)  # the column of each nibble within its group of 8


def pack_awq(values: torch.Tensor) -> torch.Tensor:
    """[rows, cols] 4-bit values -> [rows, cols / 8] int32 words in AWQ's order."""
    rows, cols = values.shape
    v = values.view(rows, cols // 8, 8)[:, :, list(AWQ_ORDER)].to(torch.int64)
    words = torch.zeros(rows, cols // 8, dtype=torch.int64, device=values.device)
    for i in range(8):
        words |= (v[:, :, i] & 0xF) << (4 * i)
    return torch.where(words >= 2**31, words - 2**32, words).to(torch.int32)


def unpack_awq(words: torch.Tensor) -> torch.Tensor:
    """The inverse of `pack_awq`: [rows, cols / 8] int32 -> [rows, cols] values 0..15."""
    rows, packed = words.shape
    nibbles = torch.stack([(words >> (4 * i)) & 0xF for i in range(8)], dim=-1)
    out = torch.empty_like(nibbles)
    out[:, :, list(AWQ_ORDER)] = nibbles
    return out.reshape(rows, packed * 8)


def make_inputs(
    tokens: int, k: int, n: int, group: int, *, dtype: torch.dtype, device: str,
    seed: int | None = None,
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor]:  # fmt: skip
    """Unit-variance activations; uniform 4-bit weights and zero points; per-group scales
    around 0.01 (a weight of unit-ish variance over k terms keeps the outputs O(1))."""
    if k % group or n % 8:
        raise ValueError("k must be a multiple of the group and n of 8")
    gen = torch.Generator(device="cpu")
    gen.manual_seed(seed if seed is not None else int(torch.randint(0, 2**31 - 1, (1,))))
    x = torch.randn(tokens, k, generator=gen)
    q = torch.randint(0, 16, (k, n), generator=gen)
    z = torch.randint(0, 16, (k // group, n), generator=gen)
    s = (torch.rand(k // group, n, generator=gen) + 0.5) * (0.5 / (k**0.5 * 4.0))
    return (
        x.to(dtype=dtype, device=device),
        pack_awq(q).to(device),
        s.to(dtype=dtype, device=device),
        pack_awq(z).to(device),
    )


def dequantize(qweight: torch.Tensor, scales: torch.Tensor, qzeros: torch.Tensor) -> torch.Tensor:
    """W [k, n] in fp32 from the packed weight, its per-group scales and zero points."""
    k = qweight.shape[0]
    group = k // qzeros.shape[0]
    q = unpack_awq(qweight).float()
    z = unpack_awq(qzeros).float().repeat_interleave(group, dim=0)
    return (q - z) * scales.float().repeat_interleave(group, dim=0)


def reference(
    x: torch.Tensor, qweight: torch.Tensor, scales: torch.Tensor, qzeros: torch.Tensor
) -> torch.Tensor:
    return (x.float() @ dequantize(qweight, scales, qzeros)).to(x.dtype)


def torch_awq_gemm(
    x: torch.Tensor, qweight: torch.Tensor, scales: torch.Tensor, qzeros: torch.Tensor
) -> torch.Tensor:
    """The same product by torch: the weight unpacked and dequantized in the input dtype
    (vLLM's own path from 256 tokens on, in torch ops), then one dense matmul."""
    k = qweight.shape[0]
    group = k // qzeros.shape[0]
    q = unpack_awq(qweight)
    z = unpack_awq(qzeros).repeat_interleave(group, dim=0)
    w = (q - z).to(x.dtype) * scales.repeat_interleave(group, dim=0)
    return x @ w
