"""MiniMax M3's block-sparse GQA prefill attention (`minimax_m3_sparse_attn` of
vllm/models/minimax_m3/nvidia/ops/sparse_prefill.py, the main attention of the model's
sparse layers on Hopper, after the lightning indexer picked each token's KV blocks):
inputs, fp32 reference, torch baseline.

A chunked prefill of `reqs` requests, each adding `q_len` tokens after `prefix` cached
ones (request r's token j at absolute position p = prefix + j).  The paged KV cache is
[pages, kv_heads, 128, 2 x head_dim] in the spec's dtype (K in the first head_dim columns,
V in the second: vLLM's MiniMax M3 layout, one 128-token page a block), each request's
blocks on pages drawn from a permutation of the pool (block_table [reqs, blocks] int32).
q and the output are [reqs x q_len, kv_heads x group, head_dim].  topk is the indexer's
int32 buffer [tokens, kv_heads, topk] (the kernel reads its [kv_heads, tokens, topk]
transpose, as vLLM passes it): token p's own block p // 128 and the topk - 1 best earlier
blocks (fewer when fewer exist; the rest -1) by a score shared by the request's tokens
plus per-token noise of a quarter of its spread, so neighbouring tokens mostly agree (as
consecutive queries do) and a 16-token tile visits about twice 16 distinct blocks.

    o[t, h] = softmax_i(q[t, h] . K[i, h // group] * sm_scale) V[i, h // group]

over the positions i <= p of the blocks token t selected for KV head h // group."""

from __future__ import annotations

import torch

BLOCK = 128  # SPARSE_BLOCK_SIZE: one page, one selectable block
NOISE = 0.25  # per-token score noise against the request's shared block scores


def make_inputs(
    reqs: int, q_len: int, prefix: int, kv_heads: int, group: int, head_dim: int, topk: int,
    *, dtype: torch.dtype, device: str, seed: int | None = None,
) -> tuple[torch.Tensor, ...]:  # fmt: skip
    """(q, kv_cache, topk, block_table, cu_seqlens_q, seq_lens, prefix_lens, max_query_len,
    sm_scale), all drawn on the device (the large trial's cache is 134 M values)."""
    gen = torch.Generator(device=device)
    gen.manual_seed(seed if seed is not None else int(torch.randint(0, 2**31 - 1, (1,))))
    seq = prefix + q_len
    nb = -(-seq // BLOCK)
    pages = reqs * nb
    block_table = torch.randperm(pages, generator=gen, device=device).to(torch.int32)
    block_table = block_table.view(reqs, nb)
    kv_cache = torch.randn(
        pages, kv_heads, BLOCK, 2 * head_dim, generator=gen, device=device, dtype=dtype
    )
    tokens = reqs * q_len
    q = torch.randn(tokens, kv_heads * group, head_dim, generator=gen, device=device, dtype=dtype)
    # the indexer's selection: own block forced, the topk - 1 best causal earlier blocks
    pos = prefix + torch.arange(q_len, device=device)  # [q_len]
    own = pos // BLOCK
    blk = torch.arange(nb, device=device)
    shared = torch.randn(kv_heads, reqs, 1, nb, generator=gen, device=device)
    noise = torch.randn(kv_heads, reqs, q_len, nb, generator=gen, device=device)
    score = shared + NOISE * noise
    score = score.masked_fill(blk[None, None, None, :] > own[None, None, :, None], float("-inf"))
    score = score.masked_fill(blk[None, None, None, :] == own[None, None, :, None], float("inf"))
    k = min(topk, nb)
    best = score.topk(k, dim=-1)  # [kv_heads, reqs, q_len, k]
    ids = best.indices.to(torch.int32).masked_fill(best.values == float("-inf"), -1)
    if k < topk:
        ids = torch.cat([ids, ids.new_full((*ids.shape[:-1], topk - k), -1)], dim=-1)
    topk_buf = ids.permute(1, 2, 0, 3).reshape(tokens, kv_heads, topk).contiguous()
    cu = torch.arange(0, tokens + 1, q_len, dtype=torch.int32, device=device)
    seq_lens = torch.full((reqs,), seq, dtype=torch.int32, device=device)
    prefix_lens = torch.full((reqs,), prefix, dtype=torch.int32, device=device)
    return (q, kv_cache, topk_buf, block_table, cu, seq_lens, prefix_lens, q_len, head_dim**-0.5)


def _attend(
    q: torch.Tensor, kv_cache: torch.Tensor, topk: torch.Tensor, block_table: torch.Tensor,
    cu_seqlens_q: torch.Tensor, seq_lens: torch.Tensor, prefix_lens: torch.Tensor,
    sm_scale: float, dtype: torch.dtype,
) -> torch.Tensor:  # fmt: skip
    """Each token's selected blocks gathered (in token chunks of bounded size) and attended
    to in `dtype` (scores and softmax in fp32)."""
    tokens, heads, d = q.shape
    kvh = kv_cache.shape[1]
    group = heads // kvh
    kk = topk.shape[-1]
    out = torch.empty(tokens, heads, d, dtype=q.dtype, device=q.device)
    reqs = seq_lens.numel()
    starts = cu_seqlens_q.tolist()
    n = torch.arange(BLOCK, device=q.device)
    h_idx = torch.arange(kvh, device=q.device)
    chunk = max(1, (1 << 26) // max(1, kvh * kk * BLOCK * 2 * d))
    for r in range(reqs):
        seq = int(seq_lens[r])
        pre = int(prefix_lens[r])
        for t0 in range(starts[r], starts[r + 1], chunk):
            t1 = min(t0 + chunk, starts[r + 1])
            p = pre + torch.arange(t0 - starts[r], t1 - starts[r], device=q.device)  # [c]
            ids = topk[t0:t1].long()  # [c, kvh, kk]
            real = torch.clamp((p + BLOCK) // BLOCK, max=kk)  # the kernel's real_topk
            valid = (ids >= 0) & (
                torch.arange(kk, device=q.device)[None, None, :] < real[:, None, None]
            )
            page = block_table[r].long()[ids.clamp(min=0)]  # [c, kvh, kk]
            kv = kv_cache[page, h_idx[None, :, None]].to(dtype)  # [c, kvh, kk, BLOCK, 2d]
            pos = ids[..., None] * BLOCK + n  # [c, kvh, kk, BLOCK]
            mask = valid[..., None] & (pos <= p[:, None, None, None]) & (pos < seq)
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
    cu_seqlens_q: torch.Tensor, seq_lens: torch.Tensor, prefix_lens: torch.Tensor,
    max_query_len: int, sm_scale: float,
) -> torch.Tensor:  # fmt: skip
    """fp32 throughout; the output in fp32."""
    out = _attend(
        q.float(), kv_cache, topk, block_table, cu_seqlens_q, seq_lens, prefix_lens,
        sm_scale, torch.float32,
    )  # fmt: skip
    return out


def torch_sparse_prefill(
    q: torch.Tensor, kv_cache: torch.Tensor, topk: torch.Tensor, block_table: torch.Tensor,
    cu_seqlens_q: torch.Tensor, seq_lens: torch.Tensor, prefix_lens: torch.Tensor,
    max_query_len: int, sm_scale: float,
) -> torch.Tensor:  # fmt: skip
    """The same by torch ops in the input dtype (fp32 softmax): each token's selected
    blocks gathered per KV head, masked, two einsums."""
    return _attend(
        q, kv_cache, topk, block_table, cu_seqlens_q, seq_lens, prefix_lens, sm_scale, q.dtype
    )
