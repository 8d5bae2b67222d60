"""vLLM's ViT rotary (the `rotary_kernel` launch of vLLM's bundled flash-attention
`apply_rotary`, which `ApplyRotaryEmb.forward_cuda` runs in each vision block, e.g.
Qwen2.5-VL's): inputs, reference, torch baseline.

x is [qk, tokens, heads, head_dim] in the spec's dtype: q and k of one vision block stacked
(Qwen2.5-VL rearranges its fused QKV so, qk = 2).  cos and sin are [tokens, head_dim / 2]
in the same dtype (the kernel's wrapper requires it): the 2-D rope of a patch grid, the
row position's angles over the first quarter of the head and the column's over the second
(Qwen2.5-VL's vision rope: partial rotary 0.5 per axis, theta 10000), rotating the whole
head GPT-NeoX style (first half against second half)."""

from __future__ import annotations

import math

import torch


def make_inputs(
    qk: int,
    tokens: int,
    heads: int,
    head_dim: int,
    *,
    dtype: torch.dtype,
    device: str,
    seed: int | None = None,
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """Normal q and k, and cos/sin of a square-ish patch grid's (row, column) positions."""
    if head_dim % 4:
        raise ValueError("head_dim must be a multiple of 4 (two axes of rotary pairs)")
    gen = torch.Generator(device=device)
    gen.manual_seed(seed if seed is not None else int(torch.randint(0, 2**31 - 1, (1,))))
    x = torch.randn(qk, tokens, heads, head_dim, generator=gen, device=device).to(dtype)
    side = max(1, math.isqrt(tokens - 1) + 1)
    idx = torch.arange(tokens, device=device)
    axis_dim = head_dim // 2  # rotary dims per axis
    inv_freq = 1.0 / (
        10000.0 ** (torch.arange(0, axis_dim, 2, device=device, dtype=torch.float32) / axis_dim)
    )
    rows = (idx // side).float()[:, None] * inv_freq[None, :]
    cols = (idx % side).float()[:, None] * inv_freq[None, :]
    angles = torch.cat([rows, cols], dim=-1)  # [tokens, head_dim / 2]
    return x, angles.cos().to(dtype), angles.sin().to(dtype)


def reference(x: torch.Tensor, cos: torch.Tensor, sin: torch.Tensor) -> torch.Tensor:
    """NeoX-style rotation in fp32 over the first 2 x cos.shape[-1] dims, the rest copied."""
    half = cos.shape[-1]
    xf = x.float()
    c = cos.float()[None, : x.shape[1], None, :]
    s = sin.float()[None, : x.shape[1], None, :]
    x0, x1 = xf[..., :half], xf[..., half : 2 * half]
    out = torch.cat([x0 * c - x1 * s, x0 * s + x1 * c, xf[..., 2 * half :]], dim=-1)
    return out.to(x.dtype)


def torch_rotary(x: torch.Tensor, cos: torch.Tensor, sin: torch.Tensor) -> torch.Tensor:
    """vLLM's `ApplyRotaryEmb.forward_native` way in the input dtype: rotate_half by chunk
    and cat, several element-wise kernels."""
    half = cos.shape[-1]
    c = torch.cat([cos, cos], dim=-1)[None, : x.shape[1], None, :]
    s = torch.cat([sin, sin], dim=-1)[None, : x.shape[1], None, :]
    rot = x[..., : 2 * half]
    x1, x2 = rot.chunk(2, dim=-1)
    out = rot * c + torch.cat([-x2, x1], dim=-1) * s
    return torch.cat([out, x[..., 2 * half :]], dim=-1)
