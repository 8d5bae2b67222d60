"""SGLang's rope-fused MLA decode, stage 1 (`_fwd_grouped_kernel_stage1_rope`, the ROCm
fused-decode path of DeepSeek V2/V3): inputs, fp32 reference, torch baseline.

A decode step of `batch` requests over one latent KV head, request b attending to its
seq_lens[b] cached tokens (the first request `ctx` long, the others between 3/4 of it and
all of it).  The KV pool k_buffer [slots, 1, rank + rope] holds each token's latent (its
first `rank` columns, also the values: v_buffer is that view) and its rope part; every
token's rope part is already rotated except the last one of each request, the token of
this step, which DeepSeek's fused path writes to the cache unrotated and the kernel rotates
on the fly (writing it to k_pe_out).  kv_indptr / kv_indices (int32) put each request's
tokens on slots drawn from a permutation of the pool (slot 0 unused).  q [batch, heads,
rank + rope] holds the absorbed q_nope and the unrotated q_pe.  The rotation is GPT-J
style (pairs (2i, 2i+1), DeepSeek's is_neox_style False) with cos_sin_cache [ctx, rope]
(cos half, sin half, in the dtype, as SGLang's RotaryEmbedding keeps it) at position
seq_len - 1.  Per request, head and split j of `splits` (split length cdiv(seq_len,
splits)), the output att_out [batch, heads, splits, rank + 1] (fp32) holds the split's
normalised partial output in its first `rank` columns and its log-sum-exp in the last;
k_pe_out [batch, rope] holds the rotated rope part of the last token."""

from __future__ import annotations

import torch

SM_SCALE = 192**-0.5  # DeepSeek V2/V3: qk_nope_head_dim 128 + qk_rope_head_dim 64
ROPE_THETA = 10000.0


def seq_lens_of(batch: int, ctx: int) -> list[int]:
    """The first request `ctx` tokens long, request b shorter by (b * 997) % (ctx // 4)."""
    return [ctx - (b * 997) % max(ctx // 4, 1) for b in range(batch)]


def make_inputs(
    batch: int, ctx: int, heads: int, rank: int, rope: int, splits: int,
    *, dtype: torch.dtype, device: str, seed: int | None = None,
) -> tuple[torch.Tensor, ...]:  # fmt: skip
    """(q, k_buffer, v_buffer, kv_indptr, kv_indices, cos_sin_cache, positions, sm_scale,
    splits); normal q and pool, drawn on the device."""
    lens = seq_lens_of(batch, ctx)
    if min(lens) < splits:
        raise ValueError("every request must have at least one token per split")
    gen = torch.Generator(device=device)
    gen.manual_seed(seed if seed is not None else int(torch.randint(0, 2**31 - 1, (1,))))
    slots = sum(lens) + 1
    kv_indices = (torch.randperm(slots - 1, generator=gen, device=device) + 1).to(torch.int32)
    kv_indptr = torch.zeros(batch + 1, dtype=torch.int32, device=device)
    kv_indptr[1:] = torch.cumsum(torch.tensor(lens, device=device), 0).to(torch.int32)
    k_buffer = torch.randn(slots, 1, rank + rope, generator=gen, dtype=dtype, device=device)
    q = torch.randn(batch, heads, rank + rope, generator=gen, dtype=dtype, device=device)
    inv_freq = ROPE_THETA ** -(torch.arange(0, rope, 2, device=device).float() / rope)
    freqs = torch.arange(ctx, device=device).float()[:, None] * inv_freq[None, :]
    cos_sin_cache = torch.cat((freqs.cos(), freqs.sin()), dim=-1).to(dtype)
    positions = torch.tensor(lens, dtype=torch.int64, device=device) - 1
    v_buffer = k_buffer[..., :rank]
    return (
        q, k_buffer, v_buffer, kv_indptr, kv_indices, cos_sin_cache, positions, SM_SCALE,
        splits,
    )  # fmt: skip


def _rotate(x: torch.Tensor, cos: torch.Tensor, sin: torch.Tensor) -> torch.Tensor:
    """GPT-J style: out[2i] = x[2i] cos_i - x[2i+1] sin_i, out[2i+1] = x[2i+1] cos_i + x[2i] sin_i."""
    even, odd = x[..., 0::2], x[..., 1::2]
    out = torch.empty_like(x)
    out[..., 0::2] = even * cos - odd * sin
    out[..., 1::2] = odd * cos + even * sin
    return out


def _stage1(
    q: torch.Tensor, k_buffer: torch.Tensor, v_buffer: torch.Tensor, kv_indptr: torch.Tensor,
    kv_indices: torch.Tensor, cos_sin_cache: torch.Tensor, positions: torch.Tensor,
    sm_scale: float, splits: int, ct: torch.dtype,
) -> tuple[torch.Tensor, torch.Tensor]:  # fmt: skip
    batch, heads, width = q.shape
    rank = v_buffer.shape[-1]
    rope = width - rank
    half = rope // 2
    att = torch.zeros(batch, heads, splits, rank + 1, dtype=torch.float32, device=q.device)
    k_pe_out = torch.empty(batch, rope, dtype=q.dtype, device=q.device)
    indptr = kv_indptr.tolist()
    for b in range(batch):
        start, n = indptr[b], indptr[b + 1] - indptr[b]
        idx = kv_indices[start : start + n].long()
        k = k_buffer[idx, 0].to(ct)  # [n, rank + rope]
        pos = int(positions[b])
        cos = cos_sin_cache[pos, :half].to(ct)
        sin = cos_sin_cache[pos, half:rope].to(ct)
        k_pe_last = _rotate(k[-1, rank:], cos, sin)
        k_pe_out[b] = k_pe_last.to(q.dtype)
        k = torch.cat((k[:, rank:][:-1], k_pe_last[None]), 0)  # the rope part, last rotated
        qb = q[b].to(ct)
        q_pe = _rotate(qb[:, rank:], cos, sin)
        kv = k_buffer[idx, 0, :rank].to(ct)
        scores = (qb[:, :rank] @ kv.T + q_pe @ k.T).float() * sm_scale  # [heads, n]
        per = -(-n // splits)
        for j in range(splits):
            lo, hi = j * per, min((j + 1) * per, n)
            if hi <= lo:
                continue
            s = scores[:, lo:hi]
            m = s.max(-1, keepdim=True).values
            p = (s - m).exp()
            tot = p.sum(-1, keepdim=True)
            att[b, :, j, :rank] = (p.to(ct) @ v_buffer[idx[lo:hi], 0].to(ct)).float() / tot
            att[b, :, j, rank] = (m + tot.log()).squeeze(-1)
    return att, k_pe_out


def reference(*inputs: object) -> tuple[torch.Tensor, torch.Tensor]:
    """In fp32: per request, the last token's rope part rotated, q_pe rotated, the scores
    over the request's tokens, and per split the softmax-weighted values and log-sum-exp."""
    return _stage1(*inputs, ct=torch.float32)  # type: ignore[arg-type, misc]


def torch_stage1(*inputs: object) -> tuple[torch.Tensor, torch.Tensor]:
    """The same by torch in the input dtype, one request at a time."""
    q = inputs[0]
    assert isinstance(q, torch.Tensor)
    return _stage1(*inputs, ct=q.dtype)  # type: ignore[arg-type, misc]
