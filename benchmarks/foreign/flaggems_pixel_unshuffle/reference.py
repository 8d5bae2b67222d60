"""FlagGems' pixel_unshuffle (space to depth of a vision encoder's patch grid): inputs,
reference, torch baseline.

x is [tiles, hidden, grid, grid] in the spec's dtype (a ViT's patch features laid out as
an image); the output is [tiles, hidden * r * r, grid / r, grid / r] in the same dtype, each
r x r cell of patches stacked into the channels, input channel major."""

from __future__ import annotations

import torch
import torch.nn.functional as F


def make_inputs(
    tiles: int, hidden: int, grid: int, factor: int, *, dtype: torch.dtype, device: str,
    seed: int | None = None,
) -> tuple[torch.Tensor, int]:  # fmt: skip
    """Normal patch features."""
    gen = torch.Generator(device="cpu")
    gen.manual_seed(seed if seed is not None else int(torch.randint(0, 2**31 - 1, (1,))))
    x = torch.randn(tiles, hidden, grid, grid, generator=gen)
    return x.to(dtype).to(device), factor


def reference(x: torch.Tensor, factor: int) -> torch.Tensor:
    """The same rearrangement by view and permute: [n, c, h/r, r, w/r, r] to
    [n, c, r, r, h/r, w/r], then the channels merged (an exact copy)."""
    n, c, h, w = x.shape
    r = factor
    y = x.view(n, c, h // r, r, w // r, r).permute(0, 1, 3, 5, 2, 4)
    return y.reshape(n, c * r * r, h // r, w // r)


def torch_pixel_unshuffle(x: torch.Tensor, factor: int) -> torch.Tensor:
    """The same rearrangement by torch's F.pixel_unshuffle."""
    return F.pixel_unshuffle(x, factor)
