"""FlagGems' 3-D convolution forward as a vision encoder's patch embedding (stride = kernel,
no padding, no bias, one group): inputs, fp32 reference, torch baseline.

x is the image's or video's pixel values viewed as [patches, channels, temporal_patch,
patch, patch] (contiguous, as Qwen2.5-VL's patch embedding views them) and the weight
[embed, channels, temporal_patch, patch, patch], both in the spec's dtype; the output is
[patches, embed, 1, 1, 1] in the same dtype (the caller views it as [patches, embed])."""

from __future__ import annotations

import torch
import torch.nn.functional as F


def make_inputs(
    patches: int, channels: int, temporal_patch: int, patch: int, embed: int, *,
    dtype: torch.dtype, device: str, seed: int | None = None,
) -> tuple[torch.Tensor, torch.Tensor]:  # fmt: skip
    """Pixel values at unit scale (normalized by the image processor's mean and std) and
    weights scaled by the fan-in, so that the embeddings are O(1)."""
    gen = torch.Generator(device="cpu")
    gen.manual_seed(seed if seed is not None else int(torch.randint(0, 2**31 - 1, (1,))))
    x = torch.randn(patches, channels, temporal_patch, patch, patch, generator=gen)
    fan_in = channels * temporal_patch * patch**2
    w = torch.randn(embed, channels, temporal_patch, patch, patch, generator=gen) / fan_in**0.5
    return x.to(dtype=dtype, device=device), w.to(dtype=dtype, device=device)


def reference(x: torch.Tensor, weight: torch.Tensor) -> torch.Tensor:
    """The patch embedding as an fp32 matrix product (each patch's channels x taps values
    against each filter's), TF32 off, cast to the input dtype: no convolution routine."""
    prev = torch.backends.cuda.matmul.allow_tf32
    torch.backends.cuda.matmul.allow_tf32 = False
    try:
        out = x.float().reshape(x.shape[0], -1) @ weight.float().reshape(weight.shape[0], -1).T
    finally:
        torch.backends.cuda.matmul.allow_tf32 = prev
    return out.reshape(x.shape[0], weight.shape[0], 1, 1, 1).to(x.dtype)


def torch_conv3d(x: torch.Tensor, weight: torch.Tensor) -> torch.Tensor:
    """The same convolution by torch's F.conv3d (cuDNN on the GPU) in the input dtype."""
    return F.conv3d(x, weight, stride=weight.shape[2:])
