"""FlagGems' Kronecker product of two matrices (`kron` on 2-D tensors, its
`kron_kernel_for_batch_size_1` path): inputs, reference, torch baseline.

a is [m1, n1] and b is [m2, n2], both in the spec's dtype: a LoKr adapter's two factors
(LyCORIS' Kronecker-product low-rank adaptation: the weight update is kron(w1, w2)).  The
output is [m1 * m2, n1 * n2], out[i, j] = a[i // m2, j // n2] * b[i % m2, j % n2]."""

from __future__ import annotations

import torch


def make_inputs(
    m1: int, n1: int, m2: int, n2: int, *, dtype: torch.dtype, device: str,
    seed: int | None = None,
) -> tuple[torch.Tensor, torch.Tensor]:
    """A normal small factor (LoKr's w1) and a normal large one scaled by 0.02 (w2)."""
    gen = torch.Generator(device="cpu")
    gen.manual_seed(seed if seed is not None else int(torch.randint(0, 2**31 - 1, (1,))))
    a = torch.randn(m1, n1, generator=gen)
    b = torch.randn(m2, n2, generator=gen) * 0.02
    return a.to(dtype=dtype, device=device), b.to(dtype=dtype, device=device)


def reference(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    """By broadcasting in fp64: a[:, None, :, None] * b[None, :, None, :], reshaped, then
    rounded to the inputs' dtype."""
    m1, n1 = a.shape
    m2, n2 = b.shape
    out = a.double()[:, None, :, None] * b.double()[None, :, None, :]
    return out.reshape(m1 * m2, n1 * n2).to(a.dtype)


def torch_kron(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    """torch.kron."""
    return torch.kron(a, b)
