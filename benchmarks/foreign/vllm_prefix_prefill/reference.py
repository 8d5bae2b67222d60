"""vLLM's prefix-caching prefill attention (`context_attention_fwd`'s `_fwd_kernel`, as
`chunked_prefill_paged_decode` calls it for the ROCm attention backend): inputs,
reference, torch baseline.

q is [tokens, heads, head] and k, v are [tokens, kvheads, head]: the batch's new tokens
packed sequence after sequence (q_len each).  k_cache is [blocks, kvheads, head / x,
block_size, x] and v_cache [blocks, kvheads, head, block_size] (vLLM's split paged layout,
x = 16 bytes of the dtype) holding each sequence's ctx cached tokens.  block_table is
[seqs, max_blocks] int32 (a shuffled permutation of the pool, as a long-running server's
free list hands blocks out), start_loc [seqs + 1] int32 (the new tokens' cumulative
starts), seq_lens [seqs] int32 (cached plus new) and scale 1 / sqrt(head).  New token i of
a sequence sees every cached token and new tokens [0, i].  The output is [tokens, heads,
head]."""

from __future__ import annotations

import math

import torch


def cache_x(dtype: torch.dtype) -> int:
    """vLLM's x: 16 bytes of the cache dtype per innermost K-cache vector."""
    return 16 // torch.empty((), dtype=dtype).element_size()


def make_inputs(
    seqs: int, q_len: int, ctx: int, heads: int, kvheads: int, head: int, block_size: int,
    *, dtype: torch.dtype, device: str, seed: int | None = None,
) -> tuple[torch.Tensor, ...]:  # fmt: skip
    """Every sequence has ctx cached tokens and q_len new ones; values drawn on the
    device."""
    if heads % kvheads:
        raise ValueError("kvheads must divide heads")
    x = cache_x(dtype)
    if head % x:
        raise ValueError(f"head must be a multiple of x = {x}")
    gen = torch.Generator(device=device)
    gen.manual_seed(seed if seed is not None else int(torch.randint(0, 2**31 - 1, (1,))))
    per_seq = max(1, -(-(ctx + q_len) // block_size))
    blocks = seqs * per_seq + 1  # one spare block no sequence owns
    tokens = seqs * q_len

    def draw(*shape: int) -> torch.Tensor:
        return torch.randn(*shape, generator=gen, device=device, dtype=dtype)

    q, k, v = draw(tokens, heads, head), draw(tokens, kvheads, head), draw(tokens, kvheads, head)
    k_cache = draw(blocks, kvheads, head // x, block_size, x)
    v_cache = draw(blocks, kvheads, head, block_size)
    perm = torch.randperm(blocks, generator=gen, device=device)[: seqs * per_seq]
    block_table = perm.view(seqs, per_seq).to(torch.int32).contiguous()
    start_loc = torch.arange(seqs + 1, dtype=torch.int32, device=device) * q_len
    seq_lens = torch.full((seqs,), ctx + q_len, dtype=torch.int32, device=device)
    return q, k, v, k_cache, v_cache, block_table, start_loc, seq_lens, 1.0 / math.sqrt(head)


def _cached(
    k_cache: torch.Tensor, v_cache: torch.Tensor, table: torch.Tensor, ctx: int
) -> tuple[torch.Tensor, torch.Tensor]:
    """One sequence's cached keys and values as [ctx, kvheads, head]."""
    kc = k_cache[table.long()]  # [n, kvh, head / x, bs, x]
    n, kvh, hx, bs, x = kc.shape
    kc = kc.permute(0, 3, 1, 2, 4).reshape(n * bs, kvh, hx * x)[:ctx]
    vc = v_cache[table.long()].permute(0, 3, 1, 2).reshape(n * bs, kvh, -1)[:ctx]
    return kc, vc


def _attend(
    q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, scale: float, ctx: int
) -> torch.Tensor:
    group = q.shape[1] // k.shape[1]
    k = k.repeat_interleave(group, dim=1).float()
    v = v.repeat_interleave(group, dim=1).float()
    s = torch.einsum("qhd,khd->hqk", q.float(), k) * scale
    rows = torch.arange(q.shape[0], device=q.device)[:, None] + ctx
    cols = torch.arange(k.shape[0], device=q.device)[None, :]
    s = s.masked_fill(cols > rows, float("-inf"))
    return torch.einsum("hqk,khd->qhd", torch.softmax(s, dim=-1), v)


def reference(
    q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, k_cache: torch.Tensor,
    v_cache: torch.Tensor, block_table: torch.Tensor, start_loc: torch.Tensor,
    seq_lens: torch.Tensor, scale: float,
) -> torch.Tensor:  # fmt: skip
    """Sequence by sequence in fp32: the cached keys and values gathered through the block
    table, then the new ones, a causal softmax offset by the context, out in q's dtype."""
    out = torch.empty_like(q)
    cu = start_loc.tolist()
    for i, seq_len in enumerate(seq_lens.tolist()):
        a, b = cu[i], cu[i + 1]
        ctx = seq_len - (b - a)
        kc, vc = _cached(k_cache, v_cache, block_table[i], ctx)
        keys = torch.cat([kc, k[a:b]])
        vals = torch.cat([vc, v[a:b]])
        out[a:b] = _attend(q[a:b], keys, vals, scale, ctx).to(q.dtype)
    return out


def torch_prefix_attention(
    q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, k_cache: torch.Tensor,
    v_cache: torch.Tensor, block_table: torch.Tensor, start_loc: torch.Tensor,
    seq_lens: torch.Tensor, scale: float,
) -> torch.Tensor:  # fmt: skip
    """The same by torch ops for a batch of equal lengths (the trials'): the cached keys
    and values gathered and un-split in one index each, the new ones appended, one SDPA
    over the batch with GQA and a causal mask offset by the context."""
    seqs = seq_lens.numel()
    q_len = q.shape[0] // seqs
    ctx = int(seq_lens[0]) - q_len
    kc = k_cache[block_table.long()]  # [s, n, kvh, head / x, bs, x]
    s, n, kvh, hx, bs, x = kc.shape
    kc = kc.permute(0, 1, 4, 2, 3, 5).reshape(s, n * bs, kvh, hx * x)[:, :ctx]
    vc = v_cache[block_table.long()].permute(0, 1, 4, 2, 3).reshape(s, n * bs, kvh, -1)
    keys = torch.cat([kc, k.view(s, q_len, kvh, -1)], 1).transpose(1, 2)
    vals = torch.cat([vc[:, :ctx], v.view(s, q_len, kvh, -1)], 1).transpose(1, 2)
    qb = q.view(s, q_len, q.shape[1], q.shape[2]).transpose(1, 2)
    rows = torch.arange(q_len, device=q.device)[:, None] + ctx
    mask = torch.arange(ctx + q_len, device=q.device)[None, :] <= rows
    o = torch.nn.functional.scaled_dot_product_attention(
        qb, keys, vals, attn_mask=mask, scale=scale, enable_gqa=True
    )
    return o.transpose(1, 2).reshape(q.shape)
