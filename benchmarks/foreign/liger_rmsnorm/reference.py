"""RMSNorm forward (Llama casting) for Liger's kernel: inputs, fp32 reference, torch baseline."""

from __future__ import annotations

import torch

EPS = 1e-6


def make_inputs(
    rows: int, hidden: int, *, dtype: torch.dtype, device: str, seed: int | None = None
) -> tuple[torch.Tensor, torch.Tensor, float]:
    gen = torch.Generator(device="cpu")
    gen.manual_seed(seed if seed is not None else int(torch.randint(0, 2**31 - 1, (1,))))
    x = torch.randn(rows, hidden, generator=gen)
    w = 1.0 + 0.1 * torch.randn(hidden, generator=gen)
    return x.to(dtype=dtype, device=device), w.to(dtype=dtype, device=device), EPS


def reference(x: torch.Tensor, w: torch.Tensor, eps: float) -> torch.Tensor:
    xf = x.float()
    y = xf * torch.rsqrt(xf.pow(2).mean(-1, keepdim=True) + eps) * w.float()
    return y.to(x.dtype)


def torch_rms_norm(x: torch.Tensor, w: torch.Tensor, eps: float) -> torch.Tensor:
    """HF Llama's RMSNorm: fp32 statistics, normalized x rounded to the input dtype, times w."""
    xf = x.float()
    y = (xf * torch.rsqrt(xf.pow(2).mean(-1, keepdim=True) + eps)).to(x.dtype)
    return w * y
