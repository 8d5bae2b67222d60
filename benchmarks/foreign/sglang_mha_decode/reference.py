"""SGLang's Triton MHA decode (`decode_attention_fwd_normal`: the split-KV decode SGLang's
Triton attention backend runs when every query head has its own KV head): inputs, fp32
reference, torch baseline.

A decode step of `batch` requests, request b attending to its seq_lens[b] cached tokens
(the first request the longest, `ctx`; the others between 3/4 of it and all of it).  The
KV pool holds K and V [slots, heads, head_dim] in the spec's dtype (one KV head per query
head); SGLang's page size is 1, so kv_indptr [batch+1] int32 and kv_indices [sum of the
lengths] int32 list each request's slots, drawn from a permutation of the pool (slot 0,
SGLang's padding slot, unused).  q is [batch, heads, head_dim].  The output is [batch,
heads, head_dim] in q's dtype:

    o[b, h] = softmax_i(q[b, h] . K[s_i, h] * sm_scale) V[s_i, h]

over the slots s_i of request b."""

from __future__ import annotations

import torch


def seq_lens_of(batch: int, ctx: int) -> list[int]:
    """The first request `ctx` tokens long, request b shorter by (b * 997) % (ctx // 4)."""
    return [ctx - (b * 997) % max(ctx // 4, 1) for b in range(batch)]


def make_inputs(
    batch: int, ctx: int, heads: int, head_dim: int,
    *, dtype: torch.dtype, device: str, seed: int | None = None,
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor, float]:  # fmt: skip
    """(q, k_buffer, v_buffer, kv_indptr, kv_indices, sm_scale); normal q, K and V."""
    gen = torch.Generator(device="cpu")
    gen.manual_seed(seed if seed is not None else int(torch.randint(0, 2**31 - 1, (1,))))
    lens = seq_lens_of(batch, ctx)
    slots = sum(lens) + 1
    kv_indices = torch.randperm(slots - 1, generator=gen).to(torch.int32) + 1
    kv_indptr = torch.zeros(batch + 1, dtype=torch.int32)
    kv_indptr[1:] = torch.cumsum(torch.tensor(lens), 0).to(torch.int32)
    q = torch.randn(batch, heads, head_dim, generator=gen)
    # The pool drawn on the device, in the dtype itself (0.47 G values a tensor at 32
    # requests of 4K with 32 heads of 128: too many for a CPU generator per input set).
    pool = torch.Generator(device=device)
    pool.manual_seed(int(torch.randint(0, 2**31 - 1, (1,), generator=gen)))
    k = torch.randn(slots, heads, head_dim, generator=pool, dtype=dtype, device=device)
    v = torch.randn(slots, heads, head_dim, generator=pool, dtype=dtype, device=device)
    return (
        q.to(dtype=dtype, device=device),
        k,
        v,
        kv_indptr.to(device),
        kv_indices.to(device),
        head_dim**-0.5,
    )


def reference(
    q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, kv_indptr: torch.Tensor,
    kv_indices: torch.Tensor, sm_scale: float,
) -> torch.Tensor:  # fmt: skip
    """In fp32, request by request: the request's K and V rows, softmax, weighted sum."""
    bounds = kv_indptr.tolist()
    out = torch.empty_like(q)
    for b in range(q.shape[0]):
        slots = kv_indices[bounds[b] : bounds[b + 1]].long()
        kb = k[slots].float().transpose(0, 1)  # [heads, n, d]
        vb = v[slots].float().transpose(0, 1)
        att = torch.einsum("hd,hnd->hn", q[b].float(), kb) * sm_scale
        out[b] = torch.einsum("hn,hnd->hd", att.softmax(-1), vb).to(q.dtype)
    return out


def torch_decode(
    q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, kv_indptr: torch.Tensor,
    kv_indices: torch.Tensor, sm_scale: float,
) -> torch.Tensor:  # fmt: skip
    """The same by torch in the input dtype: each request's rows gathered into a padded
    [batch, heads, ctx, head_dim] block, then one masked scaled_dot_product_attention."""
    lens = kv_indptr[1:] - kv_indptr[:-1]
    ctx = int(lens.max())
    pos = torch.arange(ctx, device=q.device)
    valid = pos[None, :] < lens[:, None]  # [batch, ctx]
    idx = (kv_indptr[:-1, None] + pos[None, :]).clamp(max=kv_indices.shape[0] - 1)
    slots = torch.where(valid, kv_indices[idx.long()], 0).long()
    kg = k[slots].transpose(1, 2)  # [batch, heads, ctx, d]
    vg = v[slots].transpose(1, 2)
    out = torch.nn.functional.scaled_dot_product_attention(
        q.unsqueeze(2), kg, vg, attn_mask=valid[:, None, None, :], scale=sm_scale
    )
    return out.squeeze(2)
