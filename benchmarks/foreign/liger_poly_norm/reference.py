"""PolyNorm (PolyCom, Zhuo et al. 2024) for Liger's kernel: inputs, fp32 reference, torch
baseline.  y = w0 norm(x^3) + w1 norm(x^2) + w2 norm(x) + b over each row of x, with
norm(u) = u / sqrt(mean(u^2) + eps), three learnt weights and one learnt bias: the
activation of a PolyCom MLP, applied to its up-projection."""

from __future__ import annotations

import torch

EPS = 1e-6  # Liger's default


def make_inputs(
    rows: int, width: int, *, dtype: torch.dtype, device: str, seed: int | None = None
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor, float]:
    """x [rows, width], w [3] and b [1] near Liger's initialisation (1/3 each, bias 1), all
    in the model dtype, and eps."""
    gen = torch.Generator(device="cpu")
    gen.manual_seed(seed if seed is not None else int(torch.randint(0, 2**31 - 1, (1,))))
    x = torch.randn(rows, width, generator=gen)
    w = torch.full((3,), 1.0 / 3.0) + 0.05 * torch.randn(3, generator=gen)
    b = torch.ones(1) + 0.05 * torch.randn(1, generator=gen)
    x, w, b = (t.to(dtype=dtype, device=device) for t in (x, w, b))
    return x, w, b, EPS


def _norm(u: torch.Tensor, eps: float) -> torch.Tensor:
    return u * torch.rsqrt(u.pow(2).mean(dim=-1, keepdim=True) + eps)


def reference(x: torch.Tensor, w: torch.Tensor, b: torch.Tensor, eps: float) -> torch.Tensor:
    xf, wf, bf = x.float(), w.float(), b.float()
    y = wf[0] * _norm(xf**3, eps) + wf[1] * _norm(xf**2, eps) + wf[2] * _norm(xf, eps) + bf
    return y.to(x.dtype)


def torch_poly_norm(x: torch.Tensor, w: torch.Tensor, b: torch.Tensor, eps: float) -> torch.Tensor:
    """PolyCom's PolyNorm module in plain torch, in the input dtype (a dozen kernels)."""
    return w[0] * _norm(x**3, eps) + w[1] * _norm(x**2, eps) + w[2] * _norm(x, eps) + b
