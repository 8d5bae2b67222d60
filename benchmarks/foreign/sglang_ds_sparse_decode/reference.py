"""SGLang's Double Sparsity sparse decode (`sparse_flash_decode_stage2` and `_stage3`, the
attention over each query head's heavy tokens after the label scores and torch.topk):
inputs, fp32 reference, torch baseline.

A decode step of `batch` requests, request b attending to its first seq_lens[b] tokens (the
first request the longest, `ctx`; the others between 3/4 of it and all of it, as in
`sglang_ds_label_scores`).  The KV pool holds K and V [slots, kv_heads, head_dim] in the
spec's dtype; req_to_token [batch, ctx] int32 puts each request's tokens on slots drawn
from a permutation of the pool (slot 0, SGLang's padding slot, unused).  topk [heads, batch,
heavy] int64 holds, per query head and request, the positions torch.topk kept (`heavy`
distinct positions below the request's length, in score order: the order does not change
the result).  q is [batch, heads, head_dim].  The output is [batch, heads, head_dim] in
q's dtype:

    o[b, h] = softmax_i(q[b, h] . K[s_i, h // g] * sm_scale) V[s_i, h // g]

over the heavy positions i of (h, b), s_i = req_to_token[b, topk[h, b, i]]."""

from __future__ import annotations

import torch

SM_SCALE = 128**-0.5  # Llama 3.1 8B's head dim (layer.scaling)


def seq_lens_of(batch: int, ctx: int) -> list[int]:
    """The first request `ctx` tokens long, request b shorter by (b * 997) % (ctx // 4)."""
    return [ctx - (b * 997) % max(ctx // 4, 1) for b in range(batch)]


def make_inputs(
    batch: int, ctx: int, heads: int, kv_heads: int, head_dim: int, heavy: int,
    *, dtype: torch.dtype, device: str, seed: int | None = None,
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor, float]:  # fmt: skip
    """(q, k_buffer, v_buffer, req_to_token, topk, sm_scale); normal q, K and V; each
    (head, request)'s heavy positions the top `heavy` of uniform scores over its length."""
    gen = torch.Generator(device="cpu")
    gen.manual_seed(seed if seed is not None else int(torch.randint(0, 2**31 - 1, (1,))))
    lens = seq_lens_of(batch, ctx)
    if min(lens) < heavy:
        raise ValueError("every request must be at least `heavy` tokens long")
    slots = sum(lens) + 1
    perm = torch.randperm(slots - 1, generator=gen).to(torch.int32) + 1
    req_to_token = torch.zeros(batch, ctx, dtype=torch.int32)
    start = 0
    for b, n in enumerate(lens):
        req_to_token[b, :n] = perm[start : start + n]
        start += n
    scores = torch.rand(heads, batch, ctx, generator=gen)
    past = torch.arange(ctx)[None, :] >= torch.tensor(lens)[:, None]
    topk = scores.masked_fill(past[None], -1.0).topk(heavy, dim=-1).indices  # int64
    q = torch.randn(batch, heads, head_dim, generator=gen)
    # The pool drawn on the device, in the dtype itself: at 64 requests of 8K it holds 0.47 G
    # values a tensor, which a CPU generator took over a minute to draw (per input set).
    pool = torch.Generator(device=device)
    pool.manual_seed(int(torch.randint(0, 2**31 - 1, (1,), generator=gen)))
    k = torch.randn(slots, kv_heads, head_dim, generator=pool, dtype=dtype, device=device)
    v = torch.randn(slots, kv_heads, head_dim, generator=pool, dtype=dtype, device=device)
    return (
        q.to(dtype=dtype, device=device),
        k,
        v,
        req_to_token.to(device),
        topk.contiguous().to(device),
        SM_SCALE,
    )


def _gather(
    k: torch.Tensor, v: torch.Tensor, req_to_token: torch.Tensor, topk: torch.Tensor, heads: int
) -> tuple[torch.Tensor, torch.Tensor]:
    """Each (head, request)'s heavy K and V rows, [heads, batch, heavy, head_dim]."""
    batch = req_to_token.shape[0]
    rows = torch.arange(batch, device=topk.device)[None, :, None]
    slot = req_to_token.long()[rows, topk]  # [heads, batch, heavy]
    kv_head = (torch.arange(heads, device=topk.device) // (heads // k.shape[1]))[:, None, None]
    return k[slot, kv_head], v[slot, kv_head]


def reference(
    q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, req_to_token: torch.Tensor,
    topk: torch.Tensor, sm_scale: float,
) -> torch.Tensor:  # fmt: skip
    """In fp32: the heavy rows gathered, softmax over them, the weighted sum of V."""
    heads = q.shape[1]
    kg, vg = _gather(k, v, req_to_token, topk, heads)
    att = torch.einsum("bhd,hbnd->hbn", q.float(), kg.float()) * sm_scale
    out = torch.einsum("hbn,hbnd->bhd", att.softmax(-1), vg.float())
    return out.to(q.dtype)


def torch_sparse_decode(
    q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, req_to_token: torch.Tensor,
    topk: torch.Tensor, sm_scale: float,
) -> torch.Tensor:  # fmt: skip
    """The same by torch in the input dtype: the gather, then a batched scaled dot-product
    attention with one query per (request, head)."""
    heads = q.shape[1]
    kg, vg = _gather(k, v, req_to_token, topk, heads)  # [heads, batch, heavy, d]
    out = torch.nn.functional.scaled_dot_product_attention(
        q.transpose(0, 1).unsqueeze(2), kg, vg, scale=sm_scale
    )  # [heads, batch, 1, d]
    return out.squeeze(2).transpose(0, 1)
