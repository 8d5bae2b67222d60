"""FlagGems' 2-D average pooling, non-overlapping (a square window, stride equal to it, no
padding): inputs, fp32 reference, torch baseline.

x is [batch, channels, height, width] (NCHW, contiguous) in the spec's dtype; the output
is [batch, channels, height // pool, width // pool], each pixel the mean of its pool x pool
window, in the same dtype."""

from __future__ import annotations

import torch
import torch.nn.functional as F


def make_inputs(
    batch: int, channels: int, height: int, width: int, pool: int, *, dtype: torch.dtype,
    device: str, seed: int | None = None,
) -> tuple[torch.Tensor, int]:  # fmt: skip
    """Vision-tower activations: standard normal with a per-channel offset (the pooled
    means are then O(1) rather than near zero)."""
    gen = torch.Generator(device="cpu")
    gen.manual_seed(seed if seed is not None else int(torch.randint(0, 2**31 - 1, (1,))))
    x = torch.randn(batch, channels, height, width, generator=gen)
    x += torch.randn(1, channels, 1, 1, generator=gen)
    return x.to(dtype=dtype, device=device), pool


def reference(x: torch.Tensor, pool: int) -> torch.Tensor:
    """The window means by a reshape and an fp32 mean, independent of the kernel's loop."""
    n, c, h, w = x.shape
    oh, ow = h // pool, w // pool
    win = x[:, :, : oh * pool, : ow * pool].float().reshape(n, c, oh, pool, ow, pool)
    return win.mean(dim=(3, 5)).to(x.dtype)


def torch_avg_pool2d(x: torch.Tensor, pool: int) -> torch.Tensor:
    """The same pooling by torch (F.avg_pool2d), as the model's nn.AvgPool2d calls it."""
    return F.avg_pool2d(x, kernel_size=pool, stride=pool)
