"""FlagGems' matrix-vector product (`mv`, its `mv_kernel`): inputs, reference, torch baseline.

weight is [out_features, in_features] (a linear layer's weight, contiguous) and x is
[in_features] (one token's hidden state), both in the spec's dtype; the output is
[out_features] in that dtype, y = weight @ x."""

from __future__ import annotations

import torch


def make_inputs(
    out_features: int,
    in_features: int,
    *,
    dtype: torch.dtype,
    device: str,
    seed: int | None = None,
) -> tuple[torch.Tensor, torch.Tensor]:
    """A weight of normal values scaled by 1 / sqrt(in_features) (an initialised linear
    layer's spread) and a normal hidden state."""
    gen = torch.Generator(device="cpu")
    gen.manual_seed(seed if seed is not None else int(torch.randint(0, 2**31 - 1, (1,))))
    w = torch.randn(out_features, in_features, generator=gen) * in_features**-0.5
    x = torch.randn(in_features, generator=gen)
    return w.to(dtype=dtype, device=device), x.to(dtype=dtype, device=device)


def reference(weight: torch.Tensor, x: torch.Tensor) -> torch.Tensor:
    """In fp64 from the rounded inputs, then rounded to their dtype."""
    return (weight.double() @ x.double()).to(weight.dtype)


def torch_mv(weight: torch.Tensor, x: torch.Tensor) -> torch.Tensor:
    """torch.mv (cuBLAS' GEMV)."""
    return torch.mv(weight, x)
