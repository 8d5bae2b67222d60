"""FlagGems' A @ A^T (`mm(a, a.mT)`, its `mm_kernel_syrk`): inputs, reference, torch baseline.

a is [M, K], contiguous, in the spec's dtype (Muon's Newton-Schulz iterate: a weight
matrix normalised to unit spectral norm, wide side last); the output is the symmetric
[M, M] product a @ a^T in that dtype."""

from __future__ import annotations

import torch


def make_inputs(
    m: int,
    k: int,
    *,
    dtype: torch.dtype,
    device: str,
    seed: int | None = None,
) -> tuple[torch.Tensor]:
    """A normal matrix scaled by 1 / (sqrt(M) + sqrt(K)), a random matrix's largest singular
    value, so its spectral norm is about 1 as Muon's iterates keep it: the product's
    diagonal is O(1).  Drawn on the device."""
    gen = torch.Generator(device=device)
    gen.manual_seed(seed if seed is not None else int(torch.randint(0, 2**31 - 1, (1,))))
    a = torch.randn(m, k, generator=gen, device=device, dtype=torch.float32)
    a.mul_(1.0 / (m**0.5 + k**0.5))
    return (a.to(dtype),)


def reference(a: torch.Tensor) -> torch.Tensor:
    """In fp64 on the CPU (fp32 on the GPU) from the rounded input, rounded to its dtype."""
    wide = a.to(torch.float64 if a.device.type == "cpu" else torch.float32)
    return (wide @ wide.T).to(a.dtype)


def torch_mm_self_transpose(a: torch.Tensor) -> torch.Tensor:
    """torch.mm(a, a.mT): cuBLAS' full GEMM (both triangles computed)."""
    return torch.mm(a, a.mT)
