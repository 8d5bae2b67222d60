"""FlagGems' nearest-neighbour 2-D upsampling by an integer factor: inputs, reference,
torch baseline.

x is [batch, channels, height, width] (NCHW, contiguous) in the spec's dtype; the output
is [batch, channels, height * scale, width * scale], each pixel the input pixel at
(oh // scale, ow // scale).  A copy: exact."""

from __future__ import annotations

import torch
import torch.nn.functional as F


def make_inputs(
    batch: int, channels: int, height: int, width: int, scale: int, *, dtype: torch.dtype,
    device: str, seed: int | None = None,
) -> tuple[torch.Tensor, int]:  # fmt: skip
    """Standard normal feature maps (every pixel different, so a wrong source shows)."""
    gen = torch.Generator(device="cpu")
    gen.manual_seed(seed if seed is not None else int(torch.randint(0, 2**31 - 1, (1,))))
    x = torch.randn(batch, channels, height, width, generator=gen)
    return x.to(dtype=dtype, device=device), scale


def reference(x: torch.Tensor, scale: int) -> torch.Tensor:
    """Index arithmetic, independent of the kernel's: rows and columns repeated."""
    return x.repeat_interleave(scale, dim=2).repeat_interleave(scale, dim=3)


def torch_upsample_nearest2d(x: torch.Tensor, scale: int) -> torch.Tensor:
    """The same upsampling by torch (F.interpolate, mode "nearest"), as the model calls it."""
    return F.interpolate(x, scale_factor=float(scale), mode="nearest")
