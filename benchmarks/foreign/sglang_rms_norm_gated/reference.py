"""SGLang's gated RMSNorm (`rms_norm_gated` in fla/layernorm_gated.py, as Qwen3-Next's
gated delta net calls it through its `RMSNormGated` on the linear-attention output, before
the output projection): inputs, reference, torch baseline.

x is the gated delta rule's output [tokens, heads, head_dim] and z the gate branch of the
QKVZ projection, the same shape, both in the spec's dtype and contiguous (SGLang views
both as [tokens * heads, head_dim] rows); weight is the norm's [head_dim] scale in the same
dtype (Qwen3-Next's checkpoint dtype).  One group per row (group_size None), RMS norm, the
gate applied after the norm (norm_before_gate), swish activation, no bias, eps 1e-6
(Qwen3-Next's rms_norm_eps).  The output, in x's dtype and shape, is

    y = x * rsqrt(mean(x^2 over head_dim) + eps) * weight * silu(z)

with the statistics and the gate in fp32, rounded once."""

from __future__ import annotations

import torch

EPS = 1e-6


def make_inputs(
    tokens: int, heads: int, head_dim: int, *, dtype: torch.dtype, device: str,
    seed: int | None = None,
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:  # fmt: skip
    """(x, z, weight), drawn on the device: x at unit scale with a per-row spread of
    magnitudes (so the rstd matters), z at unit scale, weight about 1."""
    gen = torch.Generator(device=device)
    gen.manual_seed(seed if seed is not None else int(torch.randint(0, 2**31 - 1, (1,))))
    shape = (tokens, heads, head_dim)
    row_scale = torch.rand(tokens, heads, 1, generator=gen, device=device) * 3.0 + 0.25
    x = torch.randn(shape, generator=gen, device=device) * row_scale
    z = torch.randn(shape, generator=gen, device=device)
    w = 1.0 + 0.1 * torch.randn(head_dim, generator=gen, device=device)
    return (
        x.to(dtype).contiguous(),
        z.to(dtype).contiguous(),
        w.to(dtype).contiguous(),
    )


def reference(x: torch.Tensor, z: torch.Tensor, weight: torch.Tensor) -> torch.Tensor:
    """On the CPU in float64, rounded once to x's dtype."""
    xd, zd, wd = x.cpu().double(), z.cpu().double(), weight.cpu().double()
    rstd = torch.rsqrt(xd.square().mean(dim=-1, keepdim=True) + EPS)
    y = xd * rstd * wd * (zd * torch.sigmoid(zd))
    return y.to(x.dtype).to(x.device)


def torch_rms_norm_gated(x: torch.Tensor, z: torch.Tensor, weight: torch.Tensor) -> torch.Tensor:
    """The same by torch ops on the device (SGLang's `rms_norm_ref` with upcast): fp32
    statistics, weight and silu gate, rounded once."""
    xf = x.float()
    rstd = torch.rsqrt(xf.square().mean(dim=-1, keepdim=True) + EPS)
    zf = z.float()
    return (xf * rstd * weight.float() * torch.nn.functional.silu(zf)).to(x.dtype)
