"""FlagGems' RMSNorm backward (`rms_norm_backward`: its `rms_norm_grad_dx_kernel` and
`rms_norm_grad_dw_kernel`, then torch's sum of the weight gradient's partials): inputs,
reference, torch baseline.

x and dy are [rows, hidden] in the spec's dtype, the weight [hidden] in the same dtype, and
inv_rms [rows] in fp32, as FlagGems' own rms_norm forward saves it for the backward (an fp32
statistics buffer whatever the input's dtype).  Outputs: dx [rows, hidden] and dw [hidden],
in the dtype."""

from __future__ import annotations

import torch

EPS = 1e-5  # the forward's eps (Llama 3's and Qwen2.5's RMSNorms use 1e-5 and 1e-6)


def make_inputs(
    rows: int, hidden: int, *, dtype: torch.dtype, device: str, seed: int | None = None
) -> tuple[torch.Tensor, ...]:
    """Activations with a per-row scale (as a residual stream has), weights near one, an
    output gradient of 0.01-scaled normal values; inv_rms computed from the rounded x in
    fp32, as the forward computes and saves it."""
    gen = torch.Generator(device="cpu")
    gen.manual_seed(seed if seed is not None else int(torch.randint(0, 2**31 - 1, (1,))))
    scale = 0.5 + torch.rand(rows, 1, generator=gen) * 2
    x = (torch.randn(rows, hidden, generator=gen) * scale).to(dtype)
    dy = (torch.randn(rows, hidden, generator=gen) * 0.01).to(dtype)
    weight = (1 + 0.1 * torch.randn(hidden, generator=gen)).to(dtype)
    inv_rms = torch.rsqrt(x.float().pow(2).mean(dim=1) + EPS)
    return tuple(t.to(device) for t in (dy, x, inv_rms, weight))


def reference(
    dy: torch.Tensor, x: torch.Tensor, inv_rms: torch.Tensor, weight: torch.Tensor
) -> tuple[torch.Tensor, torch.Tensor]:
    """The RMSNorm gradients written out in fp64 from the saved inv_rms, then rounded to
    the dtype: x_hat = x inv_rms, g = dy w, dx = inv_rms (g - x_hat mean(g x_hat)), dw = the
    sum over rows of dy x_hat."""
    dyd, xd, wd = dy.double(), x.double(), weight.double()
    r = inv_rms.double()[:, None]
    x_hat = xd * r
    g = dyd * wd[None, :]
    dx = r * (g - x_hat * (g * x_hat).mean(dim=1, keepdim=True))
    dw = (dyd * x_hat).sum(dim=0)
    return dx.to(x.dtype), dw.to(weight.dtype)


def torch_rms_norm_backward(
    dy: torch.Tensor, x: torch.Tensor, inv_rms: torch.Tensor, weight: torch.Tensor
) -> tuple[torch.Tensor, torch.Tensor]:
    """aten's `_fused_rms_norm_backward` from the same statistics ([rows, 1] fp32, as
    torch's own fused forward saves them) where the build has it for the device (CUDA);
    elsewhere the same gradients in eager fp32 torch ops, as rms_norm's composite autograd
    would compute them."""
    n = x.shape[1]
    fused = getattr(torch.ops.aten, "_fused_rms_norm_backward", None)
    if x.is_cuda and fused is not None:
        dx, dw = fused(dy, x, [n], inv_rms[:, None], weight, [True, True])
        return dx, dw
    r = inv_rms[:, None]
    x_hat = x.float() * r
    g = dy.float() * weight.float()
    dx = r * (g - x_hat * (g * x_hat).mean(dim=1, keepdim=True))
    dw = (dy.float() * x_hat).sum(dim=0)
    return dx.to(x.dtype), dw.to(weight.dtype)
