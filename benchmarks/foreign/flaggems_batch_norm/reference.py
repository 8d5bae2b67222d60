"""FlagGems' batch-norm forward in training mode (batch statistics, running statistics
updated): inputs, fp32 reference, torch baseline.

x is [batch, channels, height, width] (NCHW, contiguous) in the spec's dtype; weight,
bias, running mean and running variance are [channels] fp32 (a mixed-precision model
keeps its parameters and norm statistics in fp32).  The outputs are y (the dtype),
the batch mean and inverse standard deviation ([channels], fp32) and the running mean and
variance after the step's momentum update (written in place)."""

from __future__ import annotations

import torch

MOMENTUM = 0.1  # nn.BatchNorm2d's defaults
EPS = 1e-5


def make_inputs(
    batch: int, channels: int, height: int, width: int, *, dtype: torch.dtype, device: str,
    seed: int | None = None,
) -> tuple[torch.Tensor, ...]:  # fmt: skip
    """Post-convolution activations: per-channel offsets and scales on a standard normal;
    the affine parameters and running statistics of a model some steps into training."""
    gen = torch.Generator(device="cpu")
    gen.manual_seed(seed if seed is not None else int(torch.randint(0, 2**31 - 1, (1,))))
    shift = torch.randn(1, channels, 1, 1, generator=gen)
    scale = 0.5 + torch.rand(1, channels, 1, 1, generator=gen)
    x = torch.randn(batch, channels, height, width, generator=gen) * scale + shift
    weight = 1.0 + 0.1 * torch.randn(channels, generator=gen)
    bias = 0.1 * torch.randn(channels, generator=gen)
    running_mean = 0.1 * torch.randn(channels, generator=gen)
    running_var = 0.5 + torch.rand(channels, generator=gen)
    return (
        x.to(dtype=dtype, device=device),
        weight.to(device),
        bias.to(device),
        running_mean.to(device),
        running_var.to(device),
    )


def reference(
    x: torch.Tensor, weight: torch.Tensor, bias: torch.Tensor, running_mean: torch.Tensor,
    running_var: torch.Tensor,
) -> tuple[torch.Tensor, ...]:  # fmt: skip
    """Two-pass fp64 statistics over (batch, height, width), independent of the kernel's
    per-lane Welford merge."""
    xd = x.double()
    n = x.numel() // x.shape[1]
    mean = xd.mean(dim=(0, 2, 3))
    var = ((xd - mean[None, :, None, None]) ** 2).mean(dim=(0, 2, 3))
    inv_std = 1.0 / torch.sqrt(var + EPS)
    y = (xd - mean[None, :, None, None]) * inv_std[None, :, None, None]
    y = y * weight.double()[None, :, None, None] + bias.double()[None, :, None, None]
    new_mean = (1 - MOMENTUM) * running_mean.double() + MOMENTUM * mean
    new_var = (1 - MOMENTUM) * running_var.double() + MOMENTUM * var * n / (n - 1)
    return y.to(x.dtype), mean.float(), inv_std.float(), new_mean.float(), new_var.float()


def torch_batch_norm(
    x: torch.Tensor, weight: torch.Tensor, bias: torch.Tensor, running_mean: torch.Tensor,
    running_var: torch.Tensor,
) -> tuple[torch.Tensor, ...]:  # fmt: skip
    """The same training-mode step by torch (aten's native_batch_norm, what nn.BatchNorm2d
    reaches: y, the saved mean and inverse standard deviation, the running statistics
    updated in place)."""
    y, mean, inv_std = torch.ops.aten.native_batch_norm(
        x, weight, bias, running_mean, running_var, True, MOMENTUM, EPS
    )
    return y, mean, inv_std, running_mean, running_var
