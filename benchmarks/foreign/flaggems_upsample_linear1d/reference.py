"""FlagGems' 1-D linear upsampling (a TTS length regulator stretching token-rate features
to the mel frame rate): inputs, fp64 reference, torch baseline.

x is [batch, channels, tokens] in the spec's dtype; the output is [batch, channels, frames]
in the same dtype, each frame the linear blend of the two token positions around its
centre (align_corners=False, as `F.interpolate(mode="linear")` by default)."""

from __future__ import annotations

import torch
import torch.nn.functional as F


def make_inputs(
    batch: int, channels: int, tokens: int, frames: int, *, dtype: torch.dtype, device: str,
    seed: int | None = None,
) -> tuple[torch.Tensor, int]:  # fmt: skip
    """Normal features, smoothed a little along time (neighbouring tokens correlate)."""
    gen = torch.Generator(device="cpu")
    gen.manual_seed(seed if seed is not None else int(torch.randint(0, 2**31 - 1, (1,))))
    x = torch.randn(batch, channels, tokens, generator=gen)
    x[..., 1:] = 0.6 * x[..., 1:] + 0.4 * x[..., :-1]
    return x.to(dtype).to(device), frames


def reference(x: torch.Tensor, frames: int) -> torch.Tensor:
    """The blend computed here in fp64 (source position, floor, weights) from the same
    input values, rounded once to the input dtype."""
    w_in = x.shape[-1]
    scale = w_in / frames
    pos = (torch.arange(frames, device=x.device, dtype=torch.float64) + 0.5) * scale - 0.5
    pos = pos.clamp(min=0.0, max=w_in - 1.0)
    lo = pos.floor().long()
    hi = (lo + 1).clamp(max=w_in - 1)
    t = pos - lo.double()
    xd = x.double()
    out = xd[..., lo] * (1.0 - t) + xd[..., hi] * t
    return out.to(x.dtype)


def torch_upsample_linear1d(x: torch.Tensor, frames: int) -> torch.Tensor:
    """The same upsampling by torch's F.interpolate(mode="linear") in the input dtype."""
    return F.interpolate(x, size=frames, mode="linear", align_corners=False)
