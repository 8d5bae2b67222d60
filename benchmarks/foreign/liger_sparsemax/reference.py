"""Sparsemax (Martins & Astudillo, 2016) along the last dimension for Liger's kernel:
inputs, fp32 reference, torch baseline.  The Euclidean projection of each row onto the
probability simplex: y = max(x - tau, 0) with tau chosen so that the row sums to 1, found
from the row sorted in descending order (the support is the largest k with
1 + k z_k > sum of the k largest)."""

from __future__ import annotations

import torch


def make_inputs(
    rows: int, cols: int, *, dtype: torch.dtype, device: str, seed: int | None = None
) -> tuple[torch.Tensor]:
    """Scores [rows, cols] (2 * randn: a support of a few per cent of each row)."""
    gen = torch.Generator(device="cpu")
    gen.manual_seed(seed if seed is not None else int(torch.randint(0, 2**31 - 1, (1,))))
    return ((2.0 * torch.randn(rows, cols, generator=gen)).to(dtype=dtype, device=device),)


def _sparsemax(z: torch.Tensor) -> torch.Tensor:
    """Sort, cumulative sum, support, threshold: the entmax package's algorithm."""
    zs = torch.sort(z, dim=-1, descending=True).values
    k = torch.arange(1, z.shape[-1] + 1, device=z.device, dtype=z.dtype)
    cumsum = zs.cumsum(-1)
    support = 1 + k * zs > cumsum
    k_z = support.sum(-1, keepdim=True).clamp_min(1)
    tau = (torch.where(support, zs, 0.0).sum(-1, keepdim=True) - 1) / k_z.to(z.dtype)
    return torch.clamp(z - tau, min=0)


def reference(x: torch.Tensor) -> torch.Tensor:
    return _sparsemax(x.float()).to(x.dtype)


def torch_sparsemax(x: torch.Tensor) -> torch.Tensor:
    """The same algorithm in plain torch, fp32 inside (sort, cumsum and element-wise kernels)."""
    return _sparsemax(x.float()).to(x.dtype)
