"""FlagGems' fast Hadamard transform of each row (Dao-AILab's fast-hadamard-transform
interface): inputs, fp64 reference, torch baseline.

x is [tokens, dim] in the spec's dtype, dim a power of two; the output is x @ H * scale in
the same dtype, H the dim x dim Sylvester Hadamard matrix (H[i, j] = (-1) ** popcount(i &
j), symmetric) and scale 1 / sqrt(dim), which makes the transform orthonormal."""

from __future__ import annotations

import math

import torch


def make_inputs(
    tokens: int, dim: int, *, dtype: torch.dtype, device: str, seed: int | None = None
) -> tuple[torch.Tensor, float]:
    """Activations entering a down projection: standard normal with a few outlier
    channels (what the rotation is there to spread), and the orthonormal scale."""
    gen = torch.Generator(device="cpu")
    gen.manual_seed(seed if seed is not None else int(torch.randint(0, 2**31 - 1, (1,))))
    x = torch.randn(tokens, dim, generator=gen)
    outliers = torch.randint(0, dim, (max(1, dim // 512),), generator=gen)
    x[:, outliers] *= 20.0
    return x.to(dtype=dtype, device=device), 1.0 / math.sqrt(dim)


def hadamard_matrix(dim: int, device: torch.device | str) -> torch.Tensor:
    """The Sylvester Hadamard matrix in fp64, from the bit-parity formula."""
    i = torch.arange(dim, device=device)
    bits = i[:, None] & i[None, :]
    parity = torch.zeros_like(bits)
    while bool(bits.any()):
        parity ^= bits & 1
        bits = bits >> 1
    return 1.0 - 2.0 * parity.double()


def reference(x: torch.Tensor, scale: float) -> torch.Tensor:
    """A dense fp64 matmul with the explicit matrix, independent of the butterflies."""
    h = hadamard_matrix(x.shape[-1], x.device)
    return (x.double() @ h * scale).to(x.dtype)


def torch_hadamard(x: torch.Tensor, scale: float) -> torch.Tensor:
    """The same transform in torch ops in fp32: log2(dim) butterfly stages, each a reshape
    into pairs and a sum and difference (QuaRot's and SpinQuant's fallback without the
    CUDA kernel)."""
    n, dim = x.shape
    y = x.float()
    h = 1
    while h < dim:
        y = y.view(n, dim // (2 * h), 2, h)
        y = torch.stack((y[:, :, 0] + y[:, :, 1], y[:, :, 0] - y[:, :, 1]), dim=2)
        h *= 2
    return (y.reshape(n, dim) * scale).to(x.dtype)
