"""3-D replication padding of a video feature volume, for FlagGems' kernel: inputs,
reference, torch baseline.

x is [batch, channels, frames, height, width] (contiguous) in the spec's dtype; `pads` is
(pad_hw, pad_hw, pad_hw, pad_hw, pad_t, 0) in F.pad's order (left, right, top, bottom,
front, back): a causal 3-D convolution's padding, symmetric in space and only in front in
time.  Every output element is the input element at its position shifted back by the
front, top and left pads, each coordinate clamped into the input.  A copy: exact."""

from __future__ import annotations

import torch
import torch.nn.functional as F

Pads = tuple[int, int, int, int, int, int]


def make_inputs(
    batch: int, channels: int, frames: int, height: int, width: int, pad_hw: int, pad_t: int,
    *, dtype: torch.dtype, device: str, seed: int | None = None,
) -> tuple[torch.Tensor, Pads]:  # fmt: skip
    """Standard normal volumes (every element different, so a wrong source shows), drawn on
    the target device (the large trial is 69 M values)."""
    gen = torch.Generator(device=device)
    gen.manual_seed(seed if seed is not None else int(torch.randint(0, 2**31 - 1, (1,))))
    shape = (batch, channels, frames, height, width)
    x = torch.randn(shape, generator=gen, device=device, dtype=dtype)
    return x, (pad_hw, pad_hw, pad_hw, pad_hw, pad_t, 0)


def reference(x: torch.Tensor, pads: Pads) -> torch.Tensor:
    """Index arithmetic, independent of the kernel's: each axis gathered at its clamped
    source positions."""
    pad_l, pad_r, pad_t, pad_b, pad_f, pad_ba = pads
    out = x
    for dim, (lo, hi) in ((2, (pad_f, pad_ba)), (3, (pad_t, pad_b)), (4, (pad_l, pad_r))):
        size = x.shape[dim]
        src = (torch.arange(size + lo + hi, device=x.device) - lo).clamp(0, size - 1)
        out = out.index_select(dim, src)
    return out


def torch_replication_pad3d(x: torch.Tensor, pads: Pads) -> torch.Tensor:
    """The same padding by torch (F.pad, mode "replicate"), as the model's causal 3-D
    convolution calls it."""
    return F.pad(x, pads, mode="replicate")
