"""FlagGems' masked scaled-dot-product attention forward (`scaled_dot_product_attention_
forward` with a float mask, not causal): inputs, reference, torch baseline.

q is [batch, heads, seq, head_dim], k and v [batch, kv_heads, seq, head_dim], contiguous in
the spec's dtype; the mask is the padding mask a Hugging Face encoder builds for a batch of
right-padded sequences: 0 on each sequence's real keys and the dtype's minimum on its
padding, made as [batch, 1, 1, seq] and expanded (stride 0) to [batch, heads, seq, seq],
the four-dimensional mask FlagGems reads through its strides.  The scale is 1 / sqrt(
head_dim).  The outputs are o (as q, in the dtype) and M, each query row's base-2
log-sum-exp of its scaled, masked scores (fp32)."""

from __future__ import annotations

import math

import torch


def make_inputs(
    batch: int,
    heads: int,
    kv_heads: int,
    seq: int,
    head_dim: int,
    *,
    dtype: torch.dtype,
    device: str,
    seed: int | None = None,
) -> tuple[torch.Tensor, ...]:
    """(q, k, v, mask): normal q, k, v drawn on the device; each sequence's real length
    uniform in [seq / 2, seq] (the first one full), the rest padding."""
    gen = torch.Generator(device=device)
    gen.manual_seed(seed if seed is not None else int(torch.randint(0, 2**31 - 1, (1,))))
    q = torch.randn(batch, heads, seq, head_dim, generator=gen, device=device).to(dtype)
    k = torch.randn(batch, kv_heads, seq, head_dim, generator=gen, device=device).to(dtype)
    v = torch.randn(batch, kv_heads, seq, head_dim, generator=gen, device=device).to(dtype)
    lengths = torch.randint((seq + 1) // 2, seq + 1, (batch,), generator=gen, device=device)
    lengths[0] = seq
    keep = torch.arange(seq, device=device)[None, :] < lengths[:, None]
    mask = torch.zeros(batch, 1, 1, seq, dtype=dtype, device=device)
    mask.masked_fill_(~keep[:, None, None, :], torch.finfo(dtype).min)
    return q, k, v, mask.expand(batch, heads, seq, seq)


def reference(
    q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, mask: torch.Tensor
) -> tuple[torch.Tensor, torch.Tensor]:
    """softmax(q k^T * scale + mask) v in fp32, one batch row at a time (KV heads repeated
    over their query heads), and the base-2 log-sum-exp of the scaled, masked scores."""
    batch, heads, seq, dim = q.shape
    group = heads // k.shape[1]
    scale = 1.0 / math.sqrt(dim)
    o = torch.empty(q.shape, dtype=torch.float32, device=q.device)
    lse = torch.empty(batch, heads, seq, dtype=torch.float32, device=q.device)
    for b in range(batch):
        kb = k[b].float().repeat_interleave(group, dim=0)
        vb = v[b].float().repeat_interleave(group, dim=0)
        s = (q[b].float() @ kb.transpose(-1, -2)) * scale + mask[b].float()
        lse[b] = torch.logsumexp(s, dim=-1)
        o[b] = torch.softmax(s, dim=-1) @ vb
    return o.to(q.dtype), lse * (1.0 / math.log(2.0))


def torch_sdpa(
    q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, mask: torch.Tensor
) -> tuple[torch.Tensor, torch.Tensor]:
    """torch's SDPA with the same mask and GQA (its own backend choice); M from torch's
    log-sum-exp of the scores is not returned by SDPA, so it is recomputed here unfused."""
    o = torch.nn.functional.scaled_dot_product_attention(
        q, k, v, attn_mask=mask, enable_gqa=q.shape[1] != k.shape[1]
    )
    group = q.shape[1] // k.shape[1]
    kk = k.repeat_interleave(group, dim=1)
    s = (q @ kk.transpose(-1, -2)).float() * (1.0 / math.sqrt(q.shape[-1])) + mask.float()
    return o, torch.logsumexp(s, dim=-1) * (1.0 / math.log(2.0))
