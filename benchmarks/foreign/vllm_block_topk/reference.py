"""MiniMax M3's prefill index top-k in vLLM (the `_topk_index_kernel` launch of
`minimax_m3_index_topk`, which `MiniMaxM3Indexer` calls on every sparse-attention layer of
a prefill chunk after `minimax_m3_index_score`): inputs, reference, torch baseline.

score is [heads, total_q, stride] float32: each query token's indexer score of every
128-token KV block, as `minimax_m3_index_score` leaves it (stride = round_up(max_block, 16);
entries past a token's causal blocks are never read).  cu_seqlens is [reqs + 1] int32 query
start offsets, prefix_lens [reqs] int32 the context before each request's chunk; max_q,
topk, init_blocks and local_blocks are Python ints.  The output is [heads, total_q, topk]
int32: each token's top-k causal block ids, the forced ones (the first init_blocks, the
last local_blocks of its causal window) ranked first, -1 past the causal block count."""

from __future__ import annotations

import torch

SPARSE_BLOCK = 128
# MiniMax M3's indexer on NVIDIA: topk_blocks 16, init_blocks 0, local_blocks 1
INIT_BLOCKS = 0
LOCAL_BLOCKS = 1


def valid_blocks(prefix: int, q_len: int) -> torch.Tensor:
    """Causal block count of each of a request's q_len tokens: (pos + 128) // 128."""
    return (prefix + torch.arange(q_len) + SPARSE_BLOCK) // SPARSE_BLOCK


def make_inputs(
    heads: int,
    reqs: int,
    q_len: int,
    prefix: int,
    topk: int,
    *,
    dtype: torch.dtype,
    device: str,
    seed: int | None = None,
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor, int, int, int, int]:
    """Every request a chunk of q_len new tokens after prefix context tokens; each token's
    scores a random permutation of 0..stride-1 in fp32, drawn on the device: distinct by
    construction, so the top-k and its order are unique.  (Drawn N(0, 1), the 32,768 rows
    of the 32K trial held an exact fp32 tie near the top-16 boundary often enough that the
    kernel and torch.topk picked different ids; the sorting network's work does not depend
    on the values.)"""
    del dtype  # the indexer's score is fp32 whatever the model's dtype
    max_block = -(-(prefix + q_len) // SPARSE_BLOCK)
    stride = -(-max_block // 16) * 16
    total_q = reqs * q_len
    gen = torch.Generator(device=device)
    gen.manual_seed(seed if seed is not None else int(torch.randint(0, 2**31 - 1, (1,))))
    draw = torch.rand(heads, total_q, stride, generator=gen, device=device)
    score = draw.argsort(dim=-1).float()
    cu = torch.arange(reqs + 1, dtype=torch.int32) * q_len
    prefix_lens = torch.full((reqs,), prefix, dtype=torch.int32)
    return (score, cu.to(device), prefix_lens.to(device), q_len, topk, INIT_BLOCKS,
            LOCAL_BLOCKS)  # fmt: skip


def _ranked(
    score: torch.Tensor, cu: torch.Tensor, prefix_lens: torch.Tensor, topk: int,
    init_blocks: int, local_blocks: int,
) -> torch.Tensor:  # fmt: skip
    """The kernel's rule on [heads, total_q, stride] fp32 scores: NaN to -1e30, the first
    init_blocks to 1e30 and the last local_blocks of each causal window to 1e29, blocks past
    the window out; the topk largest in descending score, -1 past the window's count."""
    heads, total_q, stride = score.shape
    out = torch.full((heads, total_q, topk), -1, dtype=torch.int32, device=score.device)
    cols = torch.arange(stride, device=score.device)
    for b in range(cu.numel() - 1):
        start, end = int(cu[b]), int(cu[b + 1])
        nv = valid_blocks(int(prefix_lens[b]), end - start).to(score.device)
        s = score[:, start:end].float().nan_to_num(nan=-1e30)
        causal = cols[None, :] < nv[:, None]
        local = causal & (cols[None, :] >= (nv[:, None] - local_blocks).clamp(min=0))
        init = causal & (cols[None, :] < init_blocks)
        s = torch.where(local, torch.full_like(s, 1e29), s)
        s = torch.where(init, torch.full_like(s, 1e30), s)
        s = torch.where(causal, s, torch.full_like(s, float("-inf")))
        k = min(topk, stride)
        idx = s.topk(k, dim=-1).indices.to(torch.int32)
        slot = torch.arange(k, device=score.device)
        idx = torch.where(slot[None, None, :] < nv[None, :, None], idx, -1)
        out[:, start:end, :k] = idx
    return out


def reference(
    score: torch.Tensor, cu: torch.Tensor, prefix_lens: torch.Tensor, max_q: int, topk: int,
    init_blocks: int, local_blocks: int,
) -> torch.Tensor:  # fmt: skip
    """On the CPU in fp32: per request, the forced blocks set high, the window masked, one
    torch.topk (ties do not occur: the scores are distinct and at most one block is forced
    under MiniMax M3's init 0, local 1)."""
    del max_q
    out = _ranked(score.cpu(), cu.cpu(), prefix_lens.cpu(), topk, init_blocks, local_blocks)
    return out.to(score.device)


def torch_topk(
    score: torch.Tensor, cu: torch.Tensor, prefix_lens: torch.Tensor, max_q: int, topk: int,
    init_blocks: int, local_blocks: int,
) -> torch.Tensor:  # fmt: skip
    """The same by torch ops on the device: a per-request mask of the forced and causal
    blocks, one torch.topk over the stride."""
    del max_q
    return _ranked(score, cu.cpu(), prefix_lens.cpu(), topk, init_blocks, local_blocks)
