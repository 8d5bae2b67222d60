"""The residual add and RMSNorm of an LLM decoder layer for Liger's kernel: inputs, fp32
reference, torch baseline.  s = x + residual (the new residual stream) and y =
s * rsqrt(mean(s^2) + eps) * w per row; the outputs are y and s."""

from __future__ import annotations

import torch

EPS = 1e-6


def make_inputs(
    rows: int, hidden: int, *, dtype: torch.dtype, device: str, seed: int | None = None
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor, float]:
    """The sublayer's output x and the residual stream [rows, hidden], the norm's weight
    [hidden] and eps."""
    gen = torch.Generator(device="cpu")
    gen.manual_seed(seed if seed is not None else int(torch.randint(0, 2**31 - 1, (1,))))
    x = torch.randn(rows, hidden, generator=gen)
    residual = 2.0 * torch.randn(rows, hidden, generator=gen)
    w = 1.0 + 0.1 * torch.randn(hidden, generator=gen)
    return (*(t.to(dtype=dtype, device=device) for t in (x, residual, w)), EPS)  # type: ignore[return-value]


def reference(
    x: torch.Tensor, residual: torch.Tensor, w: torch.Tensor, eps: float
) -> tuple[torch.Tensor, torch.Tensor]:
    s = x.float() + residual.float()
    y = s * torch.rsqrt(s.pow(2).mean(-1, keepdim=True) + eps) * w.float()
    return y.to(x.dtype), s.to(x.dtype)


def torch_add_rms_norm(
    x: torch.Tensor, residual: torch.Tensor, w: torch.Tensor, eps: float
) -> tuple[torch.Tensor, torch.Tensor]:
    """HF Llama's decoder layer: residual add in the input dtype, LlamaRMSNorm (fp32 statistics)."""
    s = residual + x
    h = s.float()
    h = h * torch.rsqrt(h.pow(2).mean(-1, keepdim=True) + eps)
    return w * h.to(x.dtype), s
