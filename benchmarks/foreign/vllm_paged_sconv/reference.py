"""Inkling's fused short convolution over its paged conv cache (vLLM's `fused_sconv`, the
path `InklingShortConv` runs for every sconv stream of every layer at every step): inputs,
reference, torch baseline.

x is [tokens, heads x ws] in the spec's dtype: one sconv stream's input (head-major, ws
channels a head); weight is [heads x ws, width], the depthwise taps.  The cache is the
layer's paged conv cache [blocks, heads, block_size, head_size] (block_size = width, as
Inkling sizes it), the stream owning columns [off_s, off_s + ws) of every head.  positions
(int64), seq_idx (int32 request of each token), slot_mapping (int64 block x block_size +
row), block_table (int32 [requests, blocks]) and query_start (int32 first row of each
token's request) are the step's metadata; off_s, ws and block_size are Python ints.  The
outputs are the convolved stream plus its input (bf16, Inkling's residual) and the cache
with every token's input written at its slot (in place)."""

from __future__ import annotations

import torch


def make_inputs(
    reqs: int, qlen: int, ctx: int, heads: int, ws: int, off_s: int, head_size: int,
    width: int, *, dtype: torch.dtype, device: str, seed: int | None = None,
) -> tuple[torch.Tensor | int, ...]:  # fmt: skip
    """`reqs` requests of `qlen` new tokens each after `ctx` cached ones (a prefill chunk,
    or a decode step when qlen is 1).  Each request's live blocks (the width - 1 positions
    before the step and the step's own) are drawn from a pool twice the size the step
    needs, block 0 left as vLLM's null block in every other table entry; the cache holds
    normal values, so a stray read or write shows."""
    if off_s + ws > head_size:
        raise ValueError("the stream must fit in the head")
    gen = torch.Generator(device=device)
    gen.manual_seed(seed if seed is not None else int(torch.randint(0, 2**31 - 1, (1,))))
    cpu = torch.Generator(device="cpu")
    cpu.manual_seed(int(torch.randint(0, 2**31 - 1, (1,), generator=gen, device=device)))
    bs = width
    first = max(0, ctx - (width - 1)) // bs
    last = (ctx + qlen - 1) // bs
    live = last - first + 1
    need = reqs * live
    pool = 2 * need + 1
    ids = torch.randperm(pool - 1, generator=cpu)[:need] + 1
    max_blocks = last + 1
    block_table = torch.zeros(reqs, max_blocks, dtype=torch.int32)
    block_table[:, first : last + 1] = ids.view(reqs, live).to(torch.int32)
    pos = ctx + torch.arange(qlen, dtype=torch.int64)
    positions = pos.repeat(reqs)
    seq_idx = torch.arange(reqs, dtype=torch.int32).repeat_interleave(qlen)
    slot_mapping = block_table[seq_idx.long(), positions // bs].long() * bs + positions % bs
    query_start = (seq_idx * qlen).to(torch.int32)
    tokens = reqs * qlen
    x = torch.randn(tokens, heads * ws, generator=gen, device=device).to(dtype)
    weight = (torch.randn(heads * ws, width, generator=gen, device=device) * 0.5).to(dtype)
    cache = torch.randn(
        pool, heads, bs, head_size, generator=gen, device=device
    ).to(dtype)  # fmt: skip
    return (
        x, weight, cache, positions.to(device), block_table.to(device), seq_idx.to(device),
        slot_mapping.to(device), query_start.to(device), off_s, ws, bs,
    )  # fmt: skip


def _conv(
    x: torch.Tensor, weight: torch.Tensor, cache: torch.Tensor, positions: torch.Tensor,
    block_table: torch.Tensor, seq_idx: torch.Tensor, query_start: torch.Tensor, off_s: int,
    ws: int, bs: int,
) -> torch.Tensor:  # fmt: skip
    """fp32 taps in the kernel's order, then the residual, in x's dtype.  Taps inside the
    step come from x, earlier ones from the cache as it was before the step."""
    tokens, channels = x.shape
    heads = channels // ws
    width = weight.shape[1]
    tok = torch.arange(tokens, device=x.device)
    req = seq_idx.long()
    acc = torch.zeros(tokens, channels, dtype=torch.float32, device=x.device)
    w = weight.float()
    for iw in range(width):
        src = positions - (width - 1) + iw
        row = tok - (width - 1) + iw
        live = src >= 0
        intra = live & (row >= query_start.long())
        cached = live & (row < query_start.long())
        xt = x[row.clamp(min=0)].float() * intra[:, None]
        s = src.clamp(min=0)
        blk = block_table[req, (s // bs).clamp(max=block_table.shape[1] - 1)].long()
        cv = cache[blk, :, s % bs, off_s : off_s + ws].reshape(tokens, heads * ws).float()
        cv = cv * cached[:, None]
        acc += (xt + cv) * w[:, iw][None, :]
    return (acc + x.float()).to(x.dtype)


def reference(
    x: torch.Tensor, weight: torch.Tensor, cache: torch.Tensor, positions: torch.Tensor,
    block_table: torch.Tensor, seq_idx: torch.Tensor, slot_mapping: torch.Tensor,
    query_start: torch.Tensor, off_s: int, ws: int, bs: int,
) -> tuple[torch.Tensor, torch.Tensor]:  # fmt: skip
    """The output from the cache before the step, and a copy of the cache with each
    token's stream input written at its slot (a negative slot skipped)."""
    out = _conv(x, weight, cache, positions, block_table, seq_idx, query_start, off_s, ws, bs)
    new = cache.clone()
    keep = slot_mapping >= 0
    slots = slot_mapping[keep]
    heads = x.shape[1] // ws
    new[slots // bs, :, slots % bs, off_s : off_s + ws] = x[keep].view(-1, heads, ws)
    return out, new


def torch_paged_sconv(
    x: torch.Tensor, weight: torch.Tensor, cache: torch.Tensor, positions: torch.Tensor,
    block_table: torch.Tensor, seq_idx: torch.Tensor, slot_mapping: torch.Tensor,
    query_start: torch.Tensor, off_s: int, ws: int, bs: int,
) -> tuple[torch.Tensor, torch.Tensor]:  # fmt: skip
    """The same by torch ops: the width taps gathered from x and the cache, fp32 sums,
    then the step's inputs scattered into the cache in place (every slot valid, as in the
    trials)."""
    out = _conv(x, weight, cache, positions, block_table, seq_idx, query_start, off_s, ws, bs)
    heads = x.shape[1] // ws
    cache[slot_mapping // bs, :, slot_mapping % bs, off_s : off_s + ws] = x.view(-1, heads, ws)
    return out, cache
