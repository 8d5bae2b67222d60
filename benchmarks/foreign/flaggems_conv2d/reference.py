"""FlagGems' 2-D convolution forward (a "same" convolution: stride 1, padding kernel // 2,
no bias, one group): inputs, fp32 reference, torch baseline.

x is [batch, channels_in, height, width] (NCHW, contiguous) and the weight [channels_out,
channels_in, kernel, kernel], both in the spec's dtype; the output is [batch,
channels_out, height, width] in the same dtype."""

from __future__ import annotations

import torch
import torch.nn.functional as F


def make_inputs(
    batch: int, channels_in: int, channels_out: int, height: int, width: int, filter_size: int, *,
    dtype: torch.dtype, device: str, seed: int | None = None,
) -> tuple[torch.Tensor, torch.Tensor]:  # fmt: skip
    """Unit-variance activations (a normalized residual stream) and Kaiming-scaled weights,
    so that the outputs are O(1)."""
    gen = torch.Generator(device="cpu")
    gen.manual_seed(seed if seed is not None else int(torch.randint(0, 2**31 - 1, (1,))))
    x = torch.randn(batch, channels_in, height, width, generator=gen)
    fan_in = channels_in * filter_size**2
    w = (
        torch.randn(channels_out, channels_in, filter_size, filter_size, generator=gen)
        / fan_in**0.5
    )
    return x.to(dtype=dtype, device=device), w.to(dtype=dtype, device=device)


def reference(x: torch.Tensor, weight: torch.Tensor) -> torch.Tensor:
    """torch's convolution in fp32 (TF32 off), cast to the input dtype."""
    prev = torch.backends.cudnn.allow_tf32
    torch.backends.cudnn.allow_tf32 = False
    try:
        out = F.conv2d(x.float(), weight.float(), padding=weight.shape[-1] // 2)
    finally:
        torch.backends.cudnn.allow_tf32 = prev
    return out.to(x.dtype)


def torch_conv2d(x: torch.Tensor, weight: torch.Tensor) -> torch.Tensor:
    """The same convolution by torch (cuDNN on the GPU) in the input dtype."""
    return F.conv2d(x, weight, padding=weight.shape[-1] // 2)
