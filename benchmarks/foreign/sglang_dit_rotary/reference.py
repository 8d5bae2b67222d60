"""SGLang's diffusion rotary (the `_rotary_embedding_kernel` launch of SGLang's
`apply_rotary_embedding`, which the diffusion runtime's `_apply_rotary_emb` runs on q and k
of each DiT self-attention with a GPT-J-style rope, e.g. Wan 2.1's): inputs, reference,
torch baseline.

x is [tokens, heads, head_dim] in the spec's dtype (one of q or k, batch 1).  cos and sin
are [tokens, head_dim / 2] in the same dtype: Wan's 3-D video rope, the frame position's
angles over the first third-ish of the pairs and the row's and column's over the rest
(Wan 2.1's split of a 128 head: 22 / 21 / 21 pairs, theta 10000), rotating even against
odd values of each pair."""

from __future__ import annotations

import math

import torch


def _axis_angles(pos: torch.Tensor, pairs: int, device: str) -> torch.Tensor:
    inv_freq = 1.0 / (
        10000.0 ** (torch.arange(0, pairs, device=device, dtype=torch.float32) * 2 / (2 * pairs))
    )
    return pos.float()[:, None] * inv_freq[None, :]


def make_inputs(
    tokens: int,
    heads: int,
    head_dim: int,
    *,
    dtype: torch.dtype,
    device: str,
    seed: int | None = None,
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """Normal x drawn on the device, and cos/sin of a (frame, row, column) latent grid."""
    if head_dim % 2 or head_dim < 6:
        raise ValueError("head_dim must be even and at least 6 (three axes of pairs)")
    gen = torch.Generator(device=device)
    gen.manual_seed(seed if seed is not None else int(torch.randint(0, 2**31 - 1, (1,))))
    x = torch.randn(tokens, heads, head_dim, generator=gen, device=device).to(dtype)
    pairs = head_dim // 2
    p_t = pairs - 2 * (pairs // 3)
    p_hw = pairs // 3
    side = max(1, math.isqrt(max(tokens, 1) // 4))  # ~4 frames of side x side patches
    idx = torch.arange(tokens, device=device)
    frame, rest = idx // (side * side), idx % (side * side)
    angles = torch.cat(
        [
            _axis_angles(frame, p_t, device),
            _axis_angles(rest // side, p_hw, device),
            _axis_angles(rest % side, p_hw, device),
        ],
        dim=-1,
    )  # [tokens, head_dim / 2]
    return x, angles.cos().to(dtype), angles.sin().to(dtype)


def reference(x: torch.Tensor, cos: torch.Tensor, sin: torch.Tensor) -> torch.Tensor:
    """GPT-J-style rotation in fp32 (even value x1, odd value x2 of each pair), rounded once."""
    xf = x.float()
    c = cos.float()[:, None, :]
    s = sin.float()[:, None, :]
    x1, x2 = xf[..., 0::2], xf[..., 1::2]
    out = torch.stack([x1 * c - x2 * s, x2 * c + x1 * s], dim=-1).flatten(-2)
    return out.to(x.dtype)


def torch_rotary(x: torch.Tensor, cos: torch.Tensor, sin: torch.Tensor) -> torch.Tensor:
    """The plain-torch way in the input dtype: strided even/odd views, several element-wise
    kernels and a stack."""
    c = cos[:, None, :]
    s = sin[:, None, :]
    x1, x2 = x[..., 0::2], x[..., 1::2]
    return torch.stack([x1 * c - x2 * s, x2 * c + x1 * s], dim=-1).flatten(-2)
