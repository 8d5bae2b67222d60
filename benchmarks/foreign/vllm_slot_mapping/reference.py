"""vLLM's KV-cache slot mapping (`BlockTables.compute_slot_mappings`, its
`_compute_slot_mappings_kernel`): inputs, reference, torch baseline.

A batch of `reqs` requests, each scheduling `query_len` new tokens after `ctx` already
computed ones (ctx drawn per request in [0, 2 * context]).  The inputs are vLLM's: the
batch-to-request-state map idx_mapping (int32 [reqs], distinct rows of the persistent
block tables, which hold 2 * reqs request states), query_start_loc (int32 [reqs + 1], the
cumulative token counts), the positions (int64 [tokens], ctx + 0 .. query_len - 1 per
request), the block tables (int32 [groups, 2 * reqs, max_num_blocks], each group's table
its own allocation in vLLM; one tensor here, each group's slice 16-byte aligned; each
request's row holds distinct block ids for its ctx + query_len tokens, zero after) and the
persistent mapping's width max_tokens (vLLM's max_num_batched_tokens).  The output is the
int64 [groups, max_tokens] slot mapping: block_table[g, idx[b], pos // 16] * 16 + pos % 16
for each token, -1 from the batch's token count on.  Integers whatever the spec's dtype."""

from __future__ import annotations

import torch

KV_BLOCK_SIZE = 16  # vLLM's default --block-size
PAD_SLOT_ID = -1


def make_inputs(
    groups: int,
    reqs: int,
    query_len: int,
    context: int,
    max_tokens: int,
    *,
    dtype: torch.dtype,
    device: str,
    seed: int | None = None,
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor, int]:
    """Random computed lengths, request-state rows and block ids (a permutation of a pool
    twice the blocks in use, per group)."""
    del dtype
    if reqs * query_len > max_tokens:
        raise ValueError("the batch's tokens exceed max_tokens")
    gen = torch.Generator(device="cpu")
    gen.manual_seed(seed if seed is not None else int(torch.randint(0, 2**31 - 1, (1,))))
    max_num_reqs = 2 * reqs
    ctx = torch.randint(0, 2 * context + 1, (reqs,), generator=gen)
    max_blocks = -(-(2 * context + query_len) // KV_BLOCK_SIZE)
    max_blocks = -(-max_blocks // 4) * 4  # each group's table 16-byte aligned
    idx_mapping = torch.randperm(max_num_reqs, generator=gen)[:reqs].to(torch.int32)
    counts = torch.full((reqs,), query_len, dtype=torch.int64)
    query_start_loc = torch.zeros(reqs + 1, dtype=torch.int32)
    query_start_loc[1:] = counts.cumsum(0).to(torch.int32)
    positions = torch.cat([c + torch.arange(query_len) for c in ctx.tolist()]).to(torch.int64)
    used = [-(-(c + query_len) // KV_BLOCK_SIZE) for c in ctx.tolist()]
    tables = torch.zeros(groups, max_num_reqs, max_blocks, dtype=torch.int32)
    for g in range(groups):
        pool = torch.randperm(2 * sum(used) + 1, generator=gen).to(torch.int32)
        start = 0
        for b, n in enumerate(used):
            tables[g, int(idx_mapping[b]), :n] = pool[start : start + n]
            start += n
    return (
        idx_mapping.to(device), query_start_loc.to(device), positions.to(device),
        tables.to(device), max_tokens,
    )  # fmt: skip


def reference(
    idx_mapping: torch.Tensor, query_start_loc: torch.Tensor, positions: torch.Tensor,
    block_tables: torch.Tensor, max_tokens: int,
) -> torch.Tensor:  # fmt: skip
    """Request by request on the host, in int64: each token's block id looked up by its
    position, times the block size, plus its offset in the block; -1 after the batch."""
    groups = block_tables.shape[0]
    idx = idx_mapping.cpu().long()
    qsl = query_start_loc.cpu().long()
    pos = positions.cpu().long()
    tables = block_tables.cpu().long()
    out = torch.full((groups, max_tokens), PAD_SLOT_ID, dtype=torch.int64)
    for g in range(groups):
        for b in range(idx.numel()):
            lo, hi = int(qsl[b]), int(qsl[b + 1])
            p = pos[lo:hi]
            row = tables[g, int(idx[b])]
            out[g, lo:hi] = row[p // KV_BLOCK_SIZE] * KV_BLOCK_SIZE + p % KV_BLOCK_SIZE
    return out.to(block_tables.device)


def torch_slot_mapping(
    idx_mapping: torch.Tensor, query_start_loc: torch.Tensor, positions: torch.Tensor,
    block_tables: torch.Tensor, max_tokens: int,
) -> torch.Tensor:  # fmt: skip
    """The same by torch ops on the device: each token's request by repeat_interleave over
    the query lengths, its block id by one gather from the flattened tables."""
    groups, rows, width = block_tables.shape
    tokens = positions.numel()
    counts = (query_start_loc[1:] - query_start_loc[:-1]).long()
    req_rows = torch.repeat_interleave(idx_mapping.long(), counts, output_size=tokens)
    flat = req_rows * width + positions // KV_BLOCK_SIZE
    base = (torch.arange(groups, device=flat.device) * (rows * width))[:, None]
    blocks = block_tables.reshape(-1)[base + flat[None, :]].long()
    out = torch.full((groups, max_tokens), PAD_SLOT_ID, dtype=torch.int64, device=flat.device)
    out[:, :tokens] = blocks * KV_BLOCK_SIZE + positions % KV_BLOCK_SIZE
    return out
