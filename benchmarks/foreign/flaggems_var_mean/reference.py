"""FlagGems' var_mean over the last dimension (per-token statistics of hidden states):
inputs, fp64 reference, torch baseline.

x is [rows, hidden] in the spec's dtype; the outputs are each row's variance (divided by
hidden - correction, Bessel's correction 1 as torch's default) and mean, both [rows] in the
input dtype."""

from __future__ import annotations

import torch


def make_inputs(
    rows: int, hidden: int, *, dtype: torch.dtype, device: str, seed: int | None = None
) -> tuple[torch.Tensor, int]:
    """Hidden states with a per-row offset and scale (a residual stream's rows differ in
    both) and a few large channels, as transformer activations have."""
    gen = torch.Generator(device="cpu")
    gen.manual_seed(seed if seed is not None else int(torch.randint(0, 2**31 - 1, (1,))))
    scale = 0.5 + 2.0 * torch.rand(rows, 1, generator=gen)
    offset = 0.5 * torch.randn(rows, 1, generator=gen)
    x = offset + scale * torch.randn(rows, hidden, generator=gen)
    hot = torch.randint(0, hidden, (4,), generator=gen)
    x[:, hot] *= 8.0
    return x.to(dtype).to(device), 1


def reference(x: torch.Tensor, correction: int) -> tuple[torch.Tensor, torch.Tensor]:
    """The two-pass mean and variance in fp64, rounded once to the input dtype."""
    xd = x.double()
    mean = xd.mean(dim=-1)
    var = ((xd - mean[:, None]) ** 2).sum(dim=-1) / (x.shape[-1] - correction)
    return var.to(x.dtype), mean.to(x.dtype)


def torch_var_mean(x: torch.Tensor, correction: int) -> tuple[torch.Tensor, torch.Tensor]:
    """The same statistics by torch.var_mean in the input dtype."""
    var, mean = torch.var_mean(x, dim=-1, correction=correction)
    return var, mean
