"""SGLang's AWQ int4 weight dequantization (`awq_dequantize_triton`, as AWQLinearMethod calls
it on ROCm before a dense matmul): inputs, fp32 reference, torch baseline.

The weight W [k, n] is stored as AWQ stores it: 4-bit values, eight per int32 along n in
AWQ's interleaved order (nibble i of a word holds column 8 j + (0, 2, 4, 6, 1, 3, 5, 7)[i]),
qweight [k, n / 8]; per group of `group` rows a 4-bit zero point packed the same way,
qzeros [k / group, n / 8], and a scale, scales [k / group, n] in the spec's dtype.  The
output is W [k, n] in the scales' dtype, W[r, c] = (q[r, c] - z[r / group, c]) *
s[r / group, c].  Inputs are drawn on the device (the large trial packs 117 M nibbles)."""

from __future__ import annotations

import torch

from foreign.vllm_awq_gemm.reference import pack_awq, unpack_awq


def make_inputs(
    k: int, n: int, group: int, *, dtype: torch.dtype, device: str, seed: int | None = None
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """Uniform 4-bit weights and zero points; per-group scales around 0.01 (an AWQ model's
    scales are of that order)."""
    if k % group or n % 8:
        raise ValueError("k must be a multiple of the group and n of 8")
    gen = torch.Generator(device=device)
    gen.manual_seed(seed if seed is not None else int(torch.randint(0, 2**31 - 1, (1,))))
    q = torch.randint(0, 16, (k, n), generator=gen, device=device, dtype=torch.int32)
    z = torch.randint(0, 16, (k // group, n), generator=gen, device=device, dtype=torch.int32)
    s = (torch.rand(k // group, n, generator=gen, device=device) + 0.5) * 0.01
    qweight = pack_awq(q)
    del q
    return qweight, s.to(dtype), pack_awq(z)


def reference(qweight: torch.Tensor, scales: torch.Tensor, qzeros: torch.Tensor) -> torch.Tensor:
    k = qweight.shape[0]
    group = k // qzeros.shape[0]
    q = unpack_awq(qweight).float()
    q -= unpack_awq(qzeros).float().repeat_interleave(group, dim=0)
    q *= scales.float().repeat_interleave(group, dim=0)
    return q.to(scales.dtype)


def torch_awq_dequantize(
    qweight: torch.Tensor, scales: torch.Tensor, qzeros: torch.Tensor
) -> torch.Tensor:
    """The same by torch ops (SGLang's NPU path, awq_dequantize_decomposition, does this):
    nibbles shifted out and reordered, zeros subtracted, scales applied in the scales'
    dtype."""
    k = qweight.shape[0]
    group = k // qzeros.shape[0]
    q = unpack_awq(qweight)
    z = unpack_awq(qzeros).repeat_interleave(group, dim=0)
    return (q - z).to(scales.dtype) * scales.repeat_interleave(group, dim=0)
