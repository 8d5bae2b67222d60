"""Qwen2-VL's multimodal rotary position embedding (M-RoPE) on q and k for Liger's kernel:
inputs, fp32 reference, torch baseline.

Each token has three positions (temporal, height, width); the rotary frequencies of a
128-wide head are split into sections of 16, 24 and 24 pairs (Qwen2-VL's `mrope_section`),
each rotated by one of the three positions.  q [b, s, hq, d] and k [b, s, hk, d] in the
layout the projections write (HF views them as [b, h, s, d] by a transpose); cos and sin
[3, b, s, d] (one duplicated `cat(freqs, freqs)` table per position axis), in the model
dtype.  The outputs are the rotated q and k."""

from __future__ import annotations

import torch

HEAD_DIM = 128
THETA = 1000000.0  # Qwen2-VL's rope_theta
MROPE_SECTION = (16, 24, 24)  # Qwen2-VL's rope_scaling["mrope_section"], pairs per axis
GRID_WIDTH = 32  # patches per row of the image the positions lay out


def make_inputs(
    b: int, s: int, hq: int, hk: int, *, dtype: torch.dtype, device: str, seed: int | None = None
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor]:
    """randn q and k; the positions Qwen2-VL gives the patches of one image GRID_WIDTH
    patches wide: one temporal position for the whole image, height and width the patch's
    row and column, all offset by the sequence's own start."""
    gen = torch.Generator(device="cpu")
    gen.manual_seed(seed if seed is not None else int(torch.randint(0, 2**31 - 1, (1,))))
    q = torch.randn(b, s, hq, HEAD_DIM, generator=gen)
    k = torch.randn(b, s, hk, HEAD_DIM, generator=gen)
    start = torch.randint(0, 4096, (b, 1), generator=gen)
    idx = torch.arange(s)[None, :]
    pos = torch.stack(
        [start + 0 * idx, start + idx // GRID_WIDTH, start + idx % GRID_WIDTH]
    ).double()  # [3, b, s]
    inv_freq = THETA ** (-torch.arange(0, HEAD_DIM, 2, dtype=torch.float64) / HEAD_DIM)
    freqs = pos[..., None] * inv_freq  # [3, b, s, d/2]
    emb = torch.cat((freqs, freqs), dim=-1)
    cos, sin = emb.cos().float(), emb.sin().float()
    return tuple(t.to(dtype=dtype, device=device) for t in (q, k, cos, sin))  # type: ignore[return-value]


def _select(table: torch.Tensor) -> torch.Tensor:
    """[3, b, s, d] -> [b, s, d]: each frequency pair from its section's position axis."""
    half = HEAD_DIM // 2
    parts, start = [], 0
    for axis, width in enumerate(MROPE_SECTION):
        parts.append(table[axis, :, :, start : start + width])
        start += width
    left = torch.cat(parts, dim=-1)
    assert left.shape[-1] == half
    return torch.cat((left, left), dim=-1)


def _rotate_half(x: torch.Tensor) -> torch.Tensor:
    x1, x2 = x.chunk(2, dim=-1)
    return torch.cat((-x2, x1), dim=-1)


def _apply(x: torch.Tensor, cos: torch.Tensor, sin: torch.Tensor) -> torch.Tensor:
    c, s_ = cos[:, :, None, :], sin[:, :, None, :]  # broadcast over heads
    return x * c + _rotate_half(x) * s_


def reference(
    q: torch.Tensor, k: torch.Tensor, cos: torch.Tensor, sin: torch.Tensor
) -> tuple[torch.Tensor, torch.Tensor]:
    cf, sf = _select(cos.float()), _select(sin.float())
    return _apply(q.float(), cf, sf).to(q.dtype), _apply(k.float(), cf, sf).to(k.dtype)


def torch_mrope(
    q: torch.Tensor, k: torch.Tensor, cos: torch.Tensor, sin: torch.Tensor
) -> tuple[torch.Tensor, torch.Tensor]:
    """HF's apply_multimodal_rotary_pos_emb in the input dtype: the sections gathered from
    the three tables, then rotate_half (several element-wise kernels, new tensors)."""
    c, s_ = _select(cos), _select(sin)
    return _apply(q, c, s_), _apply(k, c, s_)
