"""C = A @ B for the Triton tutorial matmul: inputs, fp32 reference, the cuBLAS baseline."""

from __future__ import annotations

import torch


def make_inputs(
    m: int, n: int, k: int, *, dtype: torch.dtype, device: str, seed: int | None = None
) -> tuple[torch.Tensor, torch.Tensor]:
    """A [m, k] and B [k, n], row-major, entries ~ N(0, 1) / 4 (no fp16 overflow at k=8192)."""
    gen = torch.Generator(device="cpu")
    gen.manual_seed(seed if seed is not None else int(torch.randint(0, 2**31 - 1, (1,))))
    a = (torch.randn(m, k, generator=gen) / 4).to(dtype=dtype, device=device)
    b = (torch.randn(k, n, generator=gen) / 4).to(dtype=dtype, device=device)
    return a, b


def reference(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    """fp32 product, rounded to fp16 like the tutorial kernel's output."""
    return (a.float() @ b.float()).to(torch.float16)


def torch_matmul(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    """torch.matmul (cuBLAS on the GPU), in the inputs' dtype."""
    return torch.matmul(a, b)
