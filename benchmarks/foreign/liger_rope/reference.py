"""Rotary position embedding (RoPE) on q and k for Liger's kernel: inputs, fp32 reference,
torch baseline.  q [b, s, hq, d] and k [b, s, hk, d] in the layout the projections write
(HF models view them as [b, h, s, d] by a transpose); cos and sin [b, s, d] in the
duplicated `cat(freqs, freqs)` layout, in the model dtype, each sequence at its own start
position."""

from __future__ import annotations

import torch

HEAD_DIM = 128
THETA = 500000.0  # Llama-3's rope_theta


def make_inputs(
    b: int, s: int, hq: int, hk: int, *, dtype: torch.dtype, device: str, seed: int | None = None
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor]:
    gen = torch.Generator(device="cpu")
    gen.manual_seed(seed if seed is not None else int(torch.randint(0, 2**31 - 1, (1,))))
    q = torch.randn(b, s, hq, HEAD_DIM, generator=gen)
    k = torch.randn(b, s, hk, HEAD_DIM, generator=gen)
    start = torch.randint(0, 4096, (b, 1), generator=gen)
    pos = (start + torch.arange(s)[None, :]).double()  # [b, s]
    inv_freq = THETA ** (-torch.arange(0, HEAD_DIM, 2, dtype=torch.float64) / HEAD_DIM)
    freqs = pos[..., None] * inv_freq  # [b, s, d/2]
    emb = torch.cat((freqs, freqs), dim=-1)
    cos, sin = emb.cos().float(), emb.sin().float()
    return tuple(t.to(dtype=dtype, device=device) for t in (q, k, cos, sin))  # type: ignore[return-value]


def _rotate_half(x: torch.Tensor) -> torch.Tensor:
    x1, x2 = x.chunk(2, dim=-1)
    return torch.cat((-x2, x1), dim=-1)


def _apply(x: torch.Tensor, cos: torch.Tensor, sin: torch.Tensor) -> torch.Tensor:
    c, s_ = cos[:, :, None, :], sin[:, :, None, :]  # broadcast over heads
    return x * c + _rotate_half(x) * s_


def reference(
    q: torch.Tensor, k: torch.Tensor, cos: torch.Tensor, sin: torch.Tensor
) -> tuple[torch.Tensor, torch.Tensor]:
    cf, sf = cos.float(), sin.float()
    return _apply(q.float(), cf, sf).to(q.dtype), _apply(k.float(), cf, sf).to(k.dtype)


def torch_rope(
    q: torch.Tensor, k: torch.Tensor, cos: torch.Tensor, sin: torch.Tensor
) -> tuple[torch.Tensor, torch.Tensor]:
    """HF's apply_rotary_pos_emb in the input dtype (several element-wise kernels, new tensors)."""
    return _apply(q, cos, sin), _apply(k, cos, sin)
