"""SGLang's Double Sparsity dense decode (`flash_decode_attention_fwd`: the backend's decode
attention while the batch is below the sparse threshold): inputs, fp32 reference, torch
baseline.

A decode step of `batch` requests, request b attending to its first seq_lens[b] tokens (the
first request the longest, `ctx`; the others between 3/4 of it and all of it, as in
`sglang_ds_sparse_decode`).  The KV pool holds K and V [slots, kv_heads, head_dim] in the
spec's dtype (slot 0, SGLang's padding slot, unused); req_to_token [2 * batch, ctx] int32 is
the request pool's token table, whose row b_req_idx[b] (int64, a permutation of the pool's
rows) puts request b's tokens on slots drawn from a permutation of the pool; seq_lens
[batch] int64.  q is [batch, heads, head_dim].  The output is [batch, heads, head_dim] in
q's dtype:

    o[b, h] = softmax_t(q[b, h] . K[s_t, h // g] / sqrt(head_dim)) V[s_t, h // g]

over the request's positions t < seq_lens[b], s_t = req_to_token[b_req_idx[b], t].  (SGLang's
`flash_decode_stage1` scales by 1 / sqrt(head_dim) itself, whatever scale the layer passes.)
"""

from __future__ import annotations

import torch


def seq_lens_of(batch: int, ctx: int) -> list[int]:
    """The first request `ctx` tokens long, request b shorter by (b * 997) % (ctx // 4)."""
    return [ctx - (b * 997) % max(ctx // 4, 1) for b in range(batch)]


def make_inputs(
    batch: int, ctx: int, heads: int, kv_heads: int, head_dim: int,
    *, dtype: torch.dtype, device: str, seed: int | None = None,
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor]:  # fmt: skip
    """(q, k_buffer, v_buffer, req_to_token, b_req_idx, seq_lens); normal q, K and V."""
    gen = torch.Generator(device="cpu")
    gen.manual_seed(seed if seed is not None else int(torch.randint(0, 2**31 - 1, (1,))))
    lens = seq_lens_of(batch, ctx)
    slots = sum(lens) + 1
    rows = 2 * batch
    b_req_idx = torch.randperm(rows, generator=gen)[:batch]
    # The token table drawn on the device: a permutation of the pool's slots (up to 0.5 M).
    pool = torch.Generator(device=device)
    pool.manual_seed(int(torch.randint(0, 2**31 - 1, (1,), generator=gen)))
    perm = torch.randperm(slots - 1, generator=pool, device=device).to(torch.int32) + 1
    req_to_token = torch.zeros(rows, ctx, dtype=torch.int32, device=device)
    start = 0
    for b, n in enumerate(lens):
        req_to_token[int(b_req_idx[b]), :n] = perm[start : start + n]
        start += n
    q = torch.randn(batch, heads, head_dim, generator=gen)
    # K and V drawn on the device in the dtype itself (0.23 G values each at the large trial).
    k = torch.randn(slots, kv_heads, head_dim, generator=pool, dtype=dtype, device=device)
    v = torch.randn(slots, kv_heads, head_dim, generator=pool, dtype=dtype, device=device)
    return (
        q.to(dtype=dtype, device=device),
        k,
        v,
        req_to_token,
        b_req_idx.to(device),
        torch.tensor(lens, dtype=torch.int64, device=device),
    )


def reference(
    q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, req_to_token: torch.Tensor,
    b_req_idx: torch.Tensor, seq_lens: torch.Tensor,
) -> torch.Tensor:  # fmt: skip
    """In fp32, request by request: its K and V rows gathered, softmax over them, the
    weighted sum of V."""
    batch, heads, head_dim = q.shape
    group = heads // k.shape[1]
    out = torch.empty(q.shape, dtype=torch.float32, device=q.device)
    for b in range(batch):
        n = int(seq_lens[b])
        slot = req_to_token[int(b_req_idx[b]), :n].long()
        kb = k[slot].float().repeat_interleave(group, dim=1)  # [n, heads, d]
        vb = v[slot].float().repeat_interleave(group, dim=1)
        att = torch.einsum("hd,nhd->hn", q[b].float(), kb) * head_dim**-0.5
        out[b] = torch.einsum("hn,nhd->hd", att.softmax(-1), vb)
    return out.to(q.dtype)


def torch_dense_decode(
    q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, req_to_token: torch.Tensor,
    b_req_idx: torch.Tensor, seq_lens: torch.Tensor,
) -> torch.Tensor:  # fmt: skip
    """The same by torch in the input dtype: each request's K and V gathered into a padded
    batch, then one scaled_dot_product_attention with a key mask and GQA."""
    head_dim = q.shape[2]
    ctx = req_to_token.shape[1]
    slot = req_to_token[b_req_idx].long()  # [batch, ctx]
    kg = k[slot].transpose(1, 2)  # [batch, kv_heads, ctx, d]
    vg = v[slot].transpose(1, 2)
    mask = torch.arange(ctx, device=q.device)[None, :] < seq_lens[:, None]
    out = torch.nn.functional.scaled_dot_product_attention(
        q.unsqueeze(2), kg, vg, attn_mask=mask[:, None, None, :], scale=head_dim**-0.5,
        enable_gqa=True,
    )  # fmt: skip
    return out.squeeze(2)
