"""FlagGems' weight norm over dim 0 (`_weight_norm_interface`, its `weight_norm_kernel_first`):
inputs, reference, torch baseline.

v is a convolution's direction weight [channels, fan, taps] (contiguous; dim 0 the one kept,
a Conv1d's output channels or a ConvTranspose1d's input channels) and g its magnitude
[channels, 1, 1], both in the spec's dtype, as torch's weight_norm parametrization holds
them.  The outputs are the weight w = g * v / ||v|| (each dim-0 slice's Euclidean norm) in
v's shape and the norms [channels, 1, 1], both in that dtype."""

from __future__ import annotations

import torch

EPS = torch.finfo(torch.float32).tiny  # FlagGems' eps, added to the sum of squares


def make_inputs(
    channels: int,
    fan: int,
    taps: int,
    *,
    dtype: torch.dtype,
    device: str,
    seed: int | None = None,
) -> tuple[torch.Tensor, torch.Tensor]:
    """v of normal values scaled by 1 / sqrt(fan * taps) (an initialised convolution's
    spread) and g of positive magnitudes around v's row norms (a trained parametrization's
    g has drifted from its initial ||v||)."""
    gen = torch.Generator(device="cpu")
    gen.manual_seed(seed if seed is not None else int(torch.randint(0, 2**31 - 1, (1,))))
    v = torch.randn(channels, fan, taps, generator=gen) * (fan * taps) ** -0.5
    g = torch.rand(channels, 1, 1, generator=gen) * 1.5 + 0.25
    return v.to(dtype=dtype, device=device), g.to(dtype=dtype, device=device)


def reference(v: torch.Tensor, g: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """In fp64 from the rounded inputs (the norms summed over every dimension but 0), then
    rounded to their dtype."""
    v64 = v.double()
    norm = (v64.square().sum(dim=(1, 2), keepdim=True) + EPS).sqrt()
    w = v64 / norm * g.double()
    return w.to(v.dtype), norm.to(g.dtype)


def torch_weight_norm(v: torch.Tensor, g: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """torch's own fused kernel (aten::_weight_norm_interface, what torch.nn.utils'
    weight_norm parametrization runs on CUDA for dim 0)."""
    return torch._weight_norm_interface(v, g, 0)
