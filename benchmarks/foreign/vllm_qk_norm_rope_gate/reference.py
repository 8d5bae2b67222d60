"""vLLM's fused QK RMSNorm + partial RoPE + gate copy (`fused_qk_rmsnorm_rope_gate`, as
`Qwen3NextAttention._project_qkv_gate` calls it for Qwen3-Next's and Qwen3.5's full
attention layers): inputs, fp32 reference, torch baseline.

q_gate and k are column views of the fused QKV projection [tokens, q_heads 2 head_dim +
2 kv_heads head_dim] in the spec's dtype, as vLLM splits it (row stride the whole width):
per q head its q then its output gate, then the k heads (the v heads follow, untouched).
q_weight and k_weight are the [head_dim] Gemma-style RMSNorm weights (applied as 1 +
weight), cos_sin_cache the [max_pos, rotary_dim] cos|sin table in the dtype, positions
[tokens] int64 or, with MRoPE, [3, tokens] (t, h, w) with interleaved sections.  The
outputs: q [tokens, q_heads head_dim] and k [tokens, kv_heads head_dim] normalized and
rotated on their first rotary_dim values (NeoX halves), and the raw gate [tokens, q_heads
head_dim]."""

from __future__ import annotations

import math
from typing import Any

import torch

EPS = 1e-6
NORM_BETA = 1.0
ROPE_THETA = 10_000_000.0  # Qwen3-Next's and Qwen3.5's rope_theta
MAX_POS = 32768

Outputs = tuple[torch.Tensor, torch.Tensor, torch.Tensor]


def mrope_sections(rotary_dim: int) -> tuple[int, int, int]:
    """t, h, w frequency counts summing to rotary_dim / 2, as Qwen3.5's [11, 11, 10] for
    rotary_dim 64."""
    half = rotary_dim // 2
    t = math.ceil(half / 3)
    h = math.ceil((half - t) / 2)
    return t, h, half - t - h


def make_inputs(
    tokens: int, q_heads: int, kv_heads: int, head_dim: int, rotary_dim: int, pos_rows: int, *,
    dtype: torch.dtype, device: str, seed: int | None = None,
) -> tuple[Any, ...]:  # fmt: skip
    """Unit normals as the QKV projection, weights of 0.1 normals (zero-centered, as Gemma
    norms are stored), vLLM's cos|sin cache for rope_theta 1e7, and positions of one
    sequence's chunk from a random start; with MRoPE the h and w rows trail t by 0 to 63
    (as an image's tokens do), so each frequency section reads its own row.  Drawn on the
    device."""
    gen = torch.Generator(device=device)
    gen.manual_seed(seed if seed is not None else int(torch.randint(0, 2**31 - 1, (1,))))
    qg_width, kv_width = q_heads * 2 * head_dim, kv_heads * head_dim
    qkv = torch.randn(tokens, qg_width + 2 * kv_width, generator=gen, device=device).to(dtype)
    q_gate = qkv[:, :qg_width]
    k = qkv[:, qg_width : qg_width + kv_width]
    q_weight = (0.1 * torch.randn(head_dim, generator=gen, device=device)).to(dtype)
    k_weight = (0.1 * torch.randn(head_dim, generator=gen, device=device)).to(dtype)
    inv_freq = 1.0 / ROPE_THETA ** (
        torch.arange(0, rotary_dim, 2, device=device, dtype=torch.float32) / rotary_dim
    )
    freqs = torch.arange(MAX_POS, device=device, dtype=torch.float32)[:, None] * inv_freq
    cos_sin_cache = torch.cat([freqs.cos(), freqs.sin()], dim=-1).to(dtype).contiguous()
    start = torch.randint(0, MAX_POS - tokens, (1,), generator=gen, device=device)
    pos_t = start + torch.arange(tokens, device=device)
    if pos_rows not in (1, 3):
        raise ValueError("pos_rows is 1 (1-D positions) or 3 (MRoPE's t, h, w)")
    if pos_rows == 3:
        lag = torch.randint(0, 64, (2, tokens), generator=gen, device=device)
        positions = torch.cat([pos_t[None], (pos_t[None] - lag).clamp(min=0)]).contiguous()
        section = mrope_sections(rotary_dim)
    else:
        positions, section = pos_t, None
    return (
        q_gate, k, q_weight, k_weight, cos_sin_cache, positions, q_heads, kv_heads, head_dim,
        rotary_dim, section,
    )  # fmt: skip


def _positions_per_frequency(
    positions: torch.Tensor, half: int, section: tuple[int, int, int] | None
) -> torch.Tensor:
    """[tokens, half] int64: the position each frequency reads (interleaved MRoPE: index i
    takes h where i % 3 == 1 and i < 3 h, w where i % 3 == 2 and i < 3 w, else t)."""
    if section is None:
        return positions.long()[:, None].expand(-1, half)
    i = torch.arange(half, device=positions.device)
    is_h = (i % 3 == 1) & (i < 3 * section[1])
    is_w = (i % 3 == 2) & (i < 3 * section[2])
    which = torch.where(is_h, 1, torch.where(is_w, 2, 0))
    return positions.long()[which].t()


def _norm_rope(
    x: torch.Tensor, weight: torch.Tensor, cos: torch.Tensor, sin: torch.Tensor,
    rotary_dim: int, dtype: torch.dtype,
) -> torch.Tensor:  # fmt: skip
    """x [tokens, heads, head_dim] fp32: the RMS norm rounded to the dtype, then the first
    rotary_dim values rotated in fp32 (cos, sin [tokens, half]) and rounded again."""
    inv = torch.rsqrt((x * x).mean(-1, keepdim=True) + EPS)
    xn = (x * inv * (weight.float() + NORM_BETA)).to(dtype).float()
    half = rotary_dim // 2
    x1, x2 = xn[..., :half], xn[..., half:rotary_dim]
    c, s = cos[:, None, :], sin[:, None, :]
    out = xn.clone()
    out[..., :half] = x1 * c - x2 * s
    out[..., half:rotary_dim] = x2 * c + x1 * s
    return out.to(dtype)


def reference(
    q_gate: torch.Tensor, k: torch.Tensor, q_weight: torch.Tensor, k_weight: torch.Tensor,
    cos_sin_cache: torch.Tensor, positions: torch.Tensor, q_heads: int, kv_heads: int,
    head_dim: int, rotary_dim: int, section: tuple[int, int, int] | None,
) -> Outputs:  # fmt: skip
    """In fp32 from the same rounded inputs, rounding where the kernel rounds: the
    normalized row to the dtype before the rotation, the outputs to the dtype."""
    tokens, dtype, half = q_gate.shape[0], q_gate.dtype, rotary_dim // 2
    qg = q_gate.float().reshape(tokens, q_heads, 2, head_dim)
    pos = _positions_per_frequency(positions, half, section)
    cache = cos_sin_cache.float()
    idx = torch.arange(half, device=pos.device)
    cos, sin = cache[pos, idx], cache[pos, half + idx]
    q = _norm_rope(qg[:, :, 0], q_weight, cos, sin, rotary_dim, dtype)
    kk = _norm_rope(k.float().reshape(tokens, kv_heads, head_dim), k_weight, cos, sin,
                    rotary_dim, dtype)  # fmt: skip
    gate = qg[:, :, 1].to(dtype)
    return q.reshape(tokens, -1), kk.reshape(tokens, -1), gate.reshape(tokens, -1)


def torch_qk_norm_rope_gate(
    q_gate: torch.Tensor, k: torch.Tensor, q_weight: torch.Tensor, k_weight: torch.Tensor,
    cos_sin_cache: torch.Tensor, positions: torch.Tensor, q_heads: int, kv_heads: int,
    head_dim: int, rotary_dim: int, section: tuple[int, int, int] | None,
) -> Outputs:  # fmt: skip
    """vLLM's unfused path by torch ops: the q/gate chunk and contiguous copies, a Gemma
    RMSNorm of q and of k per head in fp32 rounded to the dtype, a NeoX rotation of the
    first rotary_dim values with the cache rows gathered per token (and per frequency with
    MRoPE) in the dtype."""
    tokens, dtype, half = q_gate.shape[0], q_gate.dtype, rotary_dim // 2
    q, gate = q_gate.reshape(tokens, q_heads, 2 * head_dim).chunk(2, dim=-1)
    gate = gate.reshape(tokens, -1).contiguous()

    def rms(x: torch.Tensor, w: torch.Tensor) -> torch.Tensor:
        xf = x.float()
        xf = xf * torch.rsqrt(xf.pow(2).mean(-1, keepdim=True) + EPS)
        return (xf * (1.0 + w.float())).to(dtype)

    qn = rms(q, q_weight)
    kn = rms(k.reshape(tokens, kv_heads, head_dim), k_weight)
    pos = _positions_per_frequency(positions, half, section)
    idx = torch.arange(half, device=pos.device)
    cos = cos_sin_cache[pos, idx][:, None, :]
    sin = cos_sin_cache[pos, half + idx][:, None, :]

    def rope(x: torch.Tensor) -> torch.Tensor:
        x1, x2 = x[..., :half], x[..., half:rotary_dim]
        rot = torch.cat([x1 * cos - x2 * sin, x2 * cos + x1 * sin], dim=-1)
        return torch.cat([rot, x[..., rotary_dim:]], dim=-1)

    return rope(qn).reshape(tokens, -1), rope(kn).reshape(tokens, -1), gate
