"""FlagGems' anti-aliased bicubic resize (here a downscale, an image preprocessor's):
inputs, fp64 reference, torch baseline.

images is [batch, 3, in_h, in_w] (NCHW, contiguous) in the spec's dtype; the output is
[batch, 3, out_h, out_w] in the dtype: each output pixel the separable bicubic (a = -0.5)
filter, widened by the scale factor and normalised, over its source window
(`F.interpolate(mode="bicubic", antialias=True, align_corners=False)`)."""

from __future__ import annotations

import torch
import torch.nn.functional as F


def make_inputs(
    batch: int, channels: int, in_h: int, in_w: int, out_h: int, out_w: int, *,
    dtype: torch.dtype, device: str, seed: int | None = None,
) -> tuple[torch.Tensor, int, int]:  # fmt: skip
    """Smooth image content plus pixel noise in [0, 1] (a normalised frame)."""
    gen = torch.Generator(device="cpu")
    gen.manual_seed(seed if seed is not None else int(torch.randint(0, 2**31 - 1, (1,))))
    ys = torch.linspace(0, 6.28, in_h)[:, None]
    xs = torch.linspace(0, 6.28, in_w)[None, :]
    phase = torch.rand(batch, channels, 1, 1, generator=gen) * 6.28
    base = 0.5 + 0.25 * torch.sin(3 * xs + phase) * torch.cos(2 * ys + phase)
    img = (base + 0.2 * torch.rand(batch, channels, in_h, in_w, generator=gen)).clamp(0, 1)
    return img.to(dtype=dtype, device=device), out_h, out_w


def reference(images: torch.Tensor, out_h: int, out_w: int) -> torch.Tensor:
    """torch's anti-aliased bicubic resize in fp64 (its separable CPU path, independent of
    the kernel's two-dimensional tap loop), rounded once to the dtype."""
    out = F.interpolate(images.double().cpu(), size=(out_h, out_w), mode="bicubic",
                        antialias=True, align_corners=False)  # fmt: skip
    return out.to(dtype=images.dtype, device=images.device)


def torch_resize(images: torch.Tensor, out_h: int, out_w: int) -> torch.Tensor:
    """The same resize by torch (aten's _upsample_bicubic2d_aa, what torchvision's
    `resize(..., antialias=True)` reaches on a tensor) in the input dtype."""
    if images.device.type == "cpu" and images.dtype != torch.float32:
        # torch's CPU kernel has no 16-bit path (CUDA's has): fp32, then the dtype
        out = F.interpolate(images.float(), size=(out_h, out_w), mode="bicubic",
                            antialias=True, align_corners=False)  # fmt: skip
        return out.to(images.dtype)
    return F.interpolate(images, size=(out_h, out_w), mode="bicubic", antialias=True,
                         align_corners=False)  # fmt: skip
