"""vLLM's unified Triton attention (the TRITON_ATTN backend's `unified_attention`, 2D
launch): inputs, reference, torch baseline.

q is [tokens, heads, head]: the batch's query tokens packed sequence after sequence (each
sequence's last q_len tokens).  k_cache and v_cache are [blocks, block_size, kvheads, head]
(vLLM's paged KV cache; the batch's tokens already written).  block_table is [seqs,
max_blocks] int32 (each sequence's physical blocks, drawn as a shuffled permutation of the
pool, as a long-running server's free list hands them out), seq_lens [seqs] int32 (context
plus new tokens), cu_seqlens_q [seqs + 1] int32 (the query tokens' cumulative starts) and
scale the softmax scale 1 / sqrt(head).  Causal: query i of a sequence of q_len queries and
seq_len keys sees keys [0, seq_len - q_len + i].  The output is [tokens, heads, head]."""

from __future__ import annotations

import math

import torch


def make_inputs(
    seqs: int,
    q_len: int,
    ctx: int,
    heads: int,
    kvheads: int,
    head: int,
    block_size: int,
    *,
    dtype: torch.dtype,
    device: str,
    seed: int | None = None,
) -> tuple[
    torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor, float
]:
    """Every sequence has ctx cached tokens and q_len new ones; values drawn on the device
    (the decode trial's cache is 0.5 G values)."""
    if heads % kvheads:
        raise ValueError("kvheads must divide heads")
    gen = torch.Generator(device=device)
    gen.manual_seed(seed if seed is not None else int(torch.randint(0, 2**31 - 1, (1,))))
    seq_len = ctx + q_len
    per_seq = -(-seq_len // block_size)
    blocks = seqs * per_seq + 1  # one spare block no sequence owns
    q = torch.randn(seqs * q_len, heads, head, generator=gen, device=device, dtype=dtype)
    k = torch.randn(blocks, block_size, kvheads, head, generator=gen, device=device, dtype=dtype)
    v = torch.randn(blocks, block_size, kvheads, head, generator=gen, device=device, dtype=dtype)
    perm = torch.randperm(blocks, generator=gen, device=device)[: seqs * per_seq]
    block_table = perm.view(seqs, per_seq).to(torch.int32).contiguous()
    seq_lens = torch.full((seqs,), seq_len, dtype=torch.int32, device=device)
    cu = torch.arange(seqs + 1, dtype=torch.int32, device=device) * q_len
    return q, k, v, block_table, seq_lens, cu, 1.0 / math.sqrt(head)


def _gather(cache: torch.Tensor, table: torch.Tensor, seq_len: int) -> torch.Tensor:
    """One sequence's keys (or values) [seq_len, kvheads, head] through its block table."""
    return cache[table.long()].flatten(0, 1)[:seq_len]


def _attend(
    q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, scale: float, ctx: int
) -> torch.Tensor:
    """fp32 causal attention of q [q_len, heads, head] over k, v [seq_len, kvheads, head]."""
    group = q.shape[1] // k.shape[1]
    k = k.repeat_interleave(group, dim=1).float()
    v = v.repeat_interleave(group, dim=1).float()
    s = torch.einsum("qhd,khd->hqk", q.float(), k) * scale
    rows = torch.arange(q.shape[0], device=q.device)[:, None] + ctx
    cols = torch.arange(k.shape[0], device=q.device)[None, :]
    s = s.masked_fill(cols > rows, float("-inf"))
    return torch.einsum("hqk,khd->qhd", torch.softmax(s, dim=-1), v)


def reference(
    q: torch.Tensor, k_cache: torch.Tensor, v_cache: torch.Tensor, block_table: torch.Tensor,
    seq_lens: torch.Tensor, cu_seqlens_q: torch.Tensor, scale: float,
) -> torch.Tensor:  # fmt: skip
    """Sequence by sequence in fp32: the keys and values gathered through the block table,
    a masked softmax, out in q's dtype."""
    out = torch.empty_like(q)
    cu = cu_seqlens_q.tolist()
    lens = seq_lens.tolist()
    for i, seq_len in enumerate(lens):
        a, b = cu[i], cu[i + 1]
        k = _gather(k_cache, block_table[i], seq_len)
        v = _gather(v_cache, block_table[i], seq_len)
        out[a:b] = _attend(q[a:b], k, v, scale, seq_len - (b - a)).to(q.dtype)
    return out


def torch_attention(
    q: torch.Tensor, k_cache: torch.Tensor, v_cache: torch.Tensor, block_table: torch.Tensor,
    seq_lens: torch.Tensor, cu_seqlens_q: torch.Tensor, scale: float,
) -> torch.Tensor:  # fmt: skip
    """The same by torch ops for a batch of equal lengths (the trials'): every sequence's
    keys and values gathered in one index, one SDPA over the batch with GQA and an explicit
    causal mask offset by the context."""
    seqs = seq_lens.numel()
    q_len = q.shape[0] // seqs
    seq_len = int(seq_lens[0])
    k = k_cache[block_table.long()].flatten(1, 2)[:, :seq_len].transpose(1, 2)
    v = v_cache[block_table.long()].flatten(1, 2)[:, :seq_len].transpose(1, 2)
    qb = q.view(seqs, q_len, q.shape[1], q.shape[2]).transpose(1, 2)
    rows = torch.arange(q_len, device=q.device)[:, None] + (seq_len - q_len)
    mask = torch.arange(seq_len, device=q.device)[None, :] <= rows
    o = torch.nn.functional.scaled_dot_product_attention(
        qb, k, v, attn_mask=mask, scale=scale, enable_gqa=True
    )
    return o.transpose(1, 2).reshape(q.shape)
