"""SGLang's LoRA embedding A lookup (`embedding_lora_a_fwd` of the Triton LoRA backend, used
when an adapter targets `embed_tokens`): inputs, reference, torch baseline.

The batch is `reqs` requests of new tokens, one segment each (seg_lens, seg_indptr int32);
each request uses the adapter in pool slot weight_indices[r] (int32), whose rank is
lora_ranks[slot] (int32; 0 for a request without an adapter, whose rows stay zero).  The
pool's A weights are [slots, max rank, vocab] in the spec's dtype, as SGLang's LoRA memory
pool holds them (the vocabulary last).  The output is [tokens, max rank]: row t holds
A[slot, :rank, id_t] of its request's adapter, zeros past the rank.  The ids are int64 as
the forward batch holds them; no adapter adds tokens (no extra embeddings)."""

from __future__ import annotations

import torch

# the adapters in the pool's slots (SGLang's --max-loras-per-batch 8): ranks up to the
# pool's max rank, one slot left empty (rank 0) for requests without an adapter
SLOT_RANK_FRACTIONS = (1.0, 0.5, 0.25, 1.0, 0.125, 0.5, 0.25, 0.0)


def seg_lens_for(reqs: int, tokens: int) -> list[int]:
    """Tokens per request around `tokens` (1 for a decode batch): pairs differ by +k and -k,
    k up to a quarter of `tokens`."""
    if tokens == 1:
        return [1] * reqs
    out = []
    for r in range(reqs):
        k = (r // 2 * 13) % (tokens // 4 + 1)
        out.append(tokens + (k if r % 2 == 0 else -k) if r + 1 < reqs or r % 2 else tokens)
    return out


def slot_ranks(rank: int, loras: int) -> list[int]:
    return [int(rank * SLOT_RANK_FRACTIONS[s % len(SLOT_RANK_FRACTIONS)]) for s in range(loras)]


def request_slots(reqs: int, loras: int) -> list[int]:
    """Request r uses slot (3 r) % loras (every slot in turn for 8 slots), so the ranks
    gathered are a function of the dims."""
    return [(3 * r) % loras for r in range(reqs)]


def make_inputs(
    reqs: int, tokens: int, rank: int, loras: int, vocab: int, *, dtype: torch.dtype,
    device: str, seed: int | None = None,
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor, int]:  # fmt: skip
    gen = torch.Generator(device="cpu")
    gen.manual_seed(seed if seed is not None else int(torch.randint(0, 2**31 - 1, (1,))))
    lens = seg_lens_for(reqs, tokens)
    total = sum(lens)
    ids = torch.randint(0, vocab, (total,), generator=gen)
    weights = torch.randn(loras, rank, vocab, generator=gen) * 0.02
    ranks = torch.tensor(slot_ranks(rank, loras), dtype=torch.int32)
    slots = torch.tensor(request_slots(reqs, loras), dtype=torch.int32)
    seg_lens = torch.tensor(lens, dtype=torch.int32)
    seg_indptr = torch.zeros(reqs + 1, dtype=torch.int32)
    seg_indptr[1:] = torch.cumsum(seg_lens, 0)
    return (
        ids.to(device), weights.to(dtype=dtype, device=device), seg_lens.to(device),
        seg_indptr.to(device), slots.to(device), ranks.to(device), max(lens),
    )  # fmt: skip


def reference(
    input_ids: torch.Tensor, weights: torch.Tensor, seg_lens: torch.Tensor,
    seg_indptr: torch.Tensor, weight_indices: torch.Tensor, lora_ranks: torch.Tensor,
    max_len: int,
) -> torch.Tensor:  # fmt: skip
    """Request by request: the columns of its adapter's A at its tokens' ids, up to the
    adapter's rank."""
    del max_len
    out = torch.zeros(input_ids.shape[0], weights.shape[1], dtype=weights.dtype)
    w = weights.cpu()
    ids = input_ids.cpu()
    for r in range(seg_lens.shape[0]):
        start, n = int(seg_indptr[r]), int(seg_lens[r])
        slot = int(weight_indices[r])
        k = int(lora_ranks[slot])
        if k:
            out[start : start + n, :k] = w[slot, :k, :][:, ids[start : start + n]].T
    return out.to(weights.device)


def torch_embedding_lora_a(
    input_ids: torch.Tensor, weights: torch.Tensor, seg_lens: torch.Tensor,
    seg_indptr: torch.Tensor, weight_indices: torch.Tensor, lora_ranks: torch.Tensor,
    max_len: int,
) -> torch.Tensor:  # fmt: skip
    """By torch ops over the tokens: each token's slot by repeat_interleave, its A column by
    advanced indexing, the columns past the slot's rank zeroed."""
    del seg_indptr, max_len
    slot = torch.repeat_interleave(weight_indices.long(), seg_lens.long())
    cols = weights[slot, :, input_ids]  # [tokens, max rank]
    keep = torch.arange(weights.shape[1], device=weights.device) < lora_ranks[slot, None]
    return cols * keep
