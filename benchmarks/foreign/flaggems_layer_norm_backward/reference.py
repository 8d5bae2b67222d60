"""FlagGems' layer-norm backward (`layer_norm_backward` with output_mask all true: its
`layer_norm_backward_kernel` and `weight_bias_backward_kernel`): inputs, reference, torch
baseline.

x and dy are [rows, hidden] in the spec's dtype, weight and bias [hidden] in the same dtype
(bias is only the shape of its gradient), mean and rstd [rows] in the spec's dtype too, as
FlagGems' own layer_norm forward saves them for the backward (its statistics buffers take
the input's dtype).  Outputs: dx [rows, hidden], dw and db [hidden], in the dtype."""

from __future__ import annotations

import torch

EPS = 1e-6  # the forward's eps (Wan's and SigLIP's LayerNorms use 1e-6)


def make_inputs(
    rows: int, hidden: int, *, dtype: torch.dtype, device: str, seed: int | None = None
) -> tuple[torch.Tensor, ...]:
    """Activations with a per-row offset and scale (as a residual stream has), weights
    near one, biases near zero, an output gradient of 0.01-scaled normal values; the
    statistics computed from the rounded x in fp32 and rounded to the dtype."""
    gen = torch.Generator(device="cpu")
    gen.manual_seed(seed if seed is not None else int(torch.randint(0, 2**31 - 1, (1,))))
    offset = torch.randn(rows, 1, generator=gen)
    scale = 0.5 + torch.rand(rows, 1, generator=gen) * 2
    x = (torch.randn(rows, hidden, generator=gen) * scale + offset).to(dtype)
    dy = (torch.randn(rows, hidden, generator=gen) * 0.01).to(dtype)
    weight = (1 + 0.1 * torch.randn(hidden, generator=gen)).to(dtype)
    bias = (0.1 * torch.randn(hidden, generator=gen)).to(dtype)
    xf = x.float()
    mean = xf.mean(dim=1)
    rstd = torch.rsqrt(xf.var(dim=1, unbiased=False) + EPS)
    return tuple(t.to(device) for t in (dy, x, weight, bias, mean.to(dtype), rstd.to(dtype)))


def reference(
    dy: torch.Tensor, x: torch.Tensor, weight: torch.Tensor, bias: torch.Tensor,
    mean: torch.Tensor, rstd: torch.Tensor,
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:  # fmt: skip
    """The layer-norm gradients written out in fp64 from the saved statistics, then rounded
    to the dtype: x_hat = (x - mean) rstd, g = dy w, dx = rstd (g - mean(g) - x_hat
    mean(g x_hat)), dw = sum over rows of dy x_hat, db = sum over rows of dy."""
    dyd, xd, wd = dy.double(), x.double(), weight.double()
    x_hat = (xd - mean.double()[:, None]) * rstd.double()[:, None]
    g = dyd * wd[None, :]
    dx = rstd.double()[:, None] * (
        g - g.mean(dim=1, keepdim=True) - x_hat * (g * x_hat).mean(dim=1, keepdim=True)
    )
    dw = (dyd * x_hat).sum(dim=0)
    db = dyd.sum(dim=0)
    return dx.to(x.dtype), dw.to(weight.dtype), db.to(bias.dtype)


def torch_layer_norm_backward(
    dy: torch.Tensor, x: torch.Tensor, weight: torch.Tensor, bias: torch.Tensor,
    mean: torch.Tensor, rstd: torch.Tensor,
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:  # fmt: skip
    """aten's native_layer_norm_backward from the same statistics ([rows, 1], in fp32 on
    the GPU as torch's own forward saves them there; in the dtype on the CPU, as its CPU
    kernel wants them)."""
    n = x.shape[1]
    stat = torch.float32 if x.is_cuda else x.dtype
    dx, dw, db = torch.ops.aten.native_layer_norm_backward(
        dy, x, [n], mean.to(stat)[:, None], rstd.to(stat)[:, None], weight, bias,
        [True, True, True],
    )  # fmt: skip
    return dx, dw, db
