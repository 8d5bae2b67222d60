"""MiniMax M3's block-sparse GQA decode attention (`minimax_m3_sparse_attn_decode` of
vllm/models/minimax_m3/common/ops/sparse_attn.py, the decode half of the model's sparse
layers on Hopper, after the lightning indexer picked each token's KV blocks): inputs, fp32
reference, torch baseline.

A uniform decode batch of `reqs` requests, `q_len` query tokens each (1 in plain decode,
1 + the draft tokens when verifying): request r holds seq_lens[r] tokens counting its new
ones (the longest `ctx`, the others spread down to half of it), and its token t sits at
position p = seq_lens[r] - q_len + t.  The paged KV cache is [pages, kv_heads, 128,
2 x head_dim] in the spec's dtype (K in the first head_dim columns, V in the second: vLLM's
MiniMax M3 layout, one 128-token page a block), each request's blocks on pages drawn from a
permutation of the pool (block_table [reqs, cdiv(ctx, 128)] int32; the entries past a
request's last block point at page 0 and are never read).  q and the output are
[reqs x q_len, kv_heads x group, head_dim].  topk is the indexer's int32 buffer [tokens,
kv_heads, topk] (the kernels read its [kv_heads, tokens, topk] transpose, as vLLM passes
it): token p's own block p // 128 and the topk - 1 best earlier blocks (fewer when fewer
exist; the rest -1) by a score the request's tokens share plus per-token noise of a quarter
of its spread.

    o[t, h] = softmax_i(q[t, h] . K[i, h // group] * sm_scale) V[i, h // group]

over the positions i <= p of the blocks token t selected for KV head h // group."""

from __future__ import annotations

import torch

BLOCK = 128  # SPARSE_BLOCK_SIZE: one page, one selectable block
NOISE = 0.25  # per-token score noise against the request's shared block scores


def seq_lengths(reqs: int, q_len: int, ctx: int) -> list[int]:
    """The longest request has ctx tokens, the others spread down to half of it."""
    return [max(q_len, ctx - (r * 7919) % max(1, ctx // 2)) for r in range(reqs)]


def make_inputs(
    reqs: int, q_len: int, ctx: int, kv_heads: int, group: int, head_dim: int, topk: int,
    *, dtype: torch.dtype, device: str, seed: int | None = None,
) -> tuple[torch.Tensor, ...]:  # fmt: skip
    """(q, kv_cache, topk, block_table, seq_lens, q_len, sm_scale), drawn on the device (the
    large trial's cache is 1.6 G values)."""
    gen = torch.Generator(device=device)
    gen.manual_seed(seed if seed is not None else int(torch.randint(0, 2**31 - 1, (1,))))
    lens = seq_lengths(reqs, q_len, ctx)
    nbs = [-(-length // BLOCK) for length in lens]
    width = -(-ctx // BLOCK)
    perm = torch.randperm(sum(nbs), generator=gen, device=device).to(torch.int32)
    block_table = torch.zeros(reqs, width, dtype=torch.int32, device=device)
    start = 0
    for r, nb in enumerate(nbs):
        block_table[r, :nb] = perm[start : start + nb]
        start += nb
    kv_cache = torch.randn(
        sum(nbs), kv_heads, BLOCK, 2 * head_dim, generator=gen, device=device, dtype=dtype
    )
    tokens = reqs * q_len
    q = torch.randn(tokens, kv_heads * group, head_dim, generator=gen, device=device, dtype=dtype)
    # the indexer's selection: own block forced, the topk - 1 best causal earlier blocks
    seq_lens = torch.tensor(lens, dtype=torch.int32, device=device)
    req = torch.arange(tokens, device=device) // q_len
    pos = seq_lens.long()[req] - q_len + torch.arange(tokens, device=device) % q_len
    own = pos // BLOCK  # [tokens]
    blk = torch.arange(width, device=device)
    shared = torch.randn(kv_heads, reqs, width, generator=gen, device=device)
    noise = torch.randn(kv_heads, tokens, width, generator=gen, device=device)
    score = shared[:, req] + NOISE * noise  # [kv_heads, tokens, width]
    score = score.masked_fill(blk[None, None, :] > own[None, :, None], float("-inf"))
    score = score.masked_fill(blk[None, None, :] == own[None, :, None], float("inf"))
    k = min(topk, width)
    best = score.topk(k, dim=-1)  # [kv_heads, tokens, k]
    ids = best.indices.to(torch.int32).masked_fill(best.values == float("-inf"), -1)
    if k < topk:
        ids = torch.cat([ids, ids.new_full((*ids.shape[:-1], topk - k), -1)], dim=-1)
    topk_buf = ids.permute(1, 0, 2).contiguous()  # [tokens, kv_heads, topk]
    return (q, kv_cache, topk_buf, block_table, seq_lens, q_len, head_dim**-0.5)


def _attend(
    q: torch.Tensor, kv_cache: torch.Tensor, topk: torch.Tensor, block_table: torch.Tensor,
    seq_lens: torch.Tensor, q_len: int, sm_scale: float, dtype: torch.dtype,
) -> torch.Tensor:  # fmt: skip
    """Each token's selected blocks gathered (in token chunks of bounded size) and attended
    to in `dtype` (scores and softmax in fp32); only the first min(topk, p // 128 + 1)
    entries of a token's list count, as in the kernel."""
    tokens, heads, d = q.shape
    kvh = kv_cache.shape[1]
    group = heads // kvh
    kk = topk.shape[-1]
    out = torch.empty(tokens, heads, d, dtype=q.dtype, device=q.device)
    n = torch.arange(BLOCK, device=q.device)
    h_idx = torch.arange(kvh, device=q.device)
    chunk = max(1, (1 << 26) // max(1, kvh * kk * BLOCK * 2 * d))
    for t0 in range(0, tokens, chunk):
        t1 = min(t0 + chunk, tokens)
        t = torch.arange(t0, t1, device=q.device)
        req = t // q_len
        p = seq_lens.long()[req] - q_len + t % q_len  # [c]
        blocks = p // BLOCK + 1  # the token's causal block count
        ids = topk[t0:t1].long()  # [c, kvh, kk]
        real = torch.clamp(blocks, max=kk)  # the kernel's real_topk
        valid = (ids >= 0) & (ids < blocks[:, None, None])
        valid &= torch.arange(kk, device=q.device)[None, None, :] < real[:, None, None]
        page = block_table.long()[req[:, None, None], ids.clamp(min=0)]  # [c, kvh, kk]
        kv = kv_cache[page, h_idx[None, :, None]].to(dtype)  # [c, kvh, kk, BLOCK, 2d]
        pos = ids[..., None] * BLOCK + n  # [c, kvh, kk, BLOCK]
        mask = valid[..., None] & (pos <= p[:, None, None, None])
        c = t1 - t0
        kmat = kv[..., :d].reshape(c, kvh, kk * BLOCK, d)
        vmat = kv[..., d:].reshape(c, kvh, kk * BLOCK, d)
        qq = q[t0:t1].to(dtype).view(c, kvh, group, d)
        s = torch.einsum("chgd,chnd->chgn", qq, kmat).float() * sm_scale
        s = s.masked_fill(~mask.reshape(c, kvh, 1, kk * BLOCK), float("-inf"))
        w = torch.softmax(s, dim=-1).to(dtype)
        o = torch.einsum("chgn,chnd->chgd", w, vmat)
        out[t0:t1] = o.reshape(c, heads, d).to(q.dtype)
    return out


def reference(
    q: torch.Tensor, kv_cache: torch.Tensor, topk: torch.Tensor, block_table: torch.Tensor,
    seq_lens: torch.Tensor, q_len: int, sm_scale: float,
) -> torch.Tensor:  # fmt: skip
    """fp32 throughout; the output in fp32."""
    return _attend(q.float(), kv_cache, topk, block_table, seq_lens, q_len, sm_scale, torch.float32)


def torch_sparse_decode(
    q: torch.Tensor, kv_cache: torch.Tensor, topk: torch.Tensor, block_table: torch.Tensor,
    seq_lens: torch.Tensor, q_len: int, sm_scale: float,
) -> torch.Tensor:  # fmt: skip
    """The same by torch ops in the input dtype (fp32 softmax): each token's selected
    blocks gathered per KV head, masked, two einsums."""
    return _attend(q, kv_cache, topk, block_table, seq_lens, q_len, sm_scale, q.dtype)
