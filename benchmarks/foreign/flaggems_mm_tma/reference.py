"""aten::mm (a bias-free linear's x @ weight.t()), for FlagGems' Hopper TMA GEMM: inputs,
reference, torch baseline.

a [m, k] the activations (row-major) and b [k, n] the transpose of a linear layer's weight
w [n, k] as aten::linear hands it to aten::mm without a bias: a column-major view (strides
1, k), which FlagGems reads through a descriptor over w's own rows.  The output c [m, n]
= a @ b in a's dtype."""

from __future__ import annotations

import torch


def make_inputs(
    m: int,
    k: int,
    n: int,
    *,
    dtype: torch.dtype,
    device: str,
    seed: int | None = None,
) -> tuple[torch.Tensor, torch.Tensor]:
    """randn activations and randn weights scaled by k^-1/2 (outputs O(1)); b is the weight's
    transposed view, not a copy.  Drawn on the target device (the decode trial's weight is
    117 M values)."""
    gen = torch.Generator(device=device)
    gen.manual_seed(seed if seed is not None else int(torch.randint(0, 2**31 - 1, (1,))))
    a = torch.randn(m, k, generator=gen, device=device, dtype=dtype)
    w = torch.randn(n, k, generator=gen, device=device, dtype=dtype)
    w.mul_(k**-0.5)
    return a, w.t()


def reference(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    """In fp64 on the CPU (fp32 on the GPU) from the rounded inputs, rounded to a's dtype."""
    wide = torch.float64 if a.device.type == "cpu" else torch.float32
    return (a.to(wide) @ b.to(wide)).to(a.dtype)


def torch_mm(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    """What aten runs without FlagGems: torch.mm (cuBLAS on the GPU)."""
    return torch.mm(a, b)
