"""vLLM's sampling-mask compaction (the `_compact_sampling_mask_kernel` launch of
`SamplingMaskTensors.from_logits`, which the v1 GPU sampler runs after top-k / top-p when
the engine is asked to return each step's sampling support, as RL rollouts do for their
off-policy corrections): inputs, reference, torch baseline.

logits [reqs, vocab] fp32 whatever the spec's dtype (the sampler's processed logits): each
row's kept support finite, the rest -inf.  Request r keeps the top k_r of normal logits,
k_r cycling through max_k, max_k / 2, max_k / 5 and max_k / 10 (at least 1); every eighth
request has top-k off (its whole row finite, wider than the id rows: its support goes by
the bitmask); every sixteenth, from the fourth, is a chunked prefill that samples nothing.
cu_num_logits [reqs + 1] int32 is one logits row per request, num_sampled [reqs] int32 is
1 or 0, and max_num_kept is the batch's largest top-k (the vocabulary for a request
without one), bounded by 2048 and the vocabulary as vLLM bounds it.  Outputs: the first
max_num_kept support ids of each row [reqs, max_num_kept] int32 (zeros past them), the
support bitmask [reqs, ceil(vocab / 8)] uint8 (bit j of byte i is column 8i + j), and the
support sizes [reqs] int32; integers whatever the dtype."""

from __future__ import annotations

import torch

MAX_COMPACT_SUPPORT = 2048


def top_ks(reqs: int, vocab: int, max_k: int) -> list[int]:
    """Each request's support size: top-k off (the whole vocabulary) every eighth."""
    cycle = [max_k, max_k // 2, max_k // 5, max_k // 10]
    return [vocab if r % 8 == 7 else max(1, cycle[r % 4]) for r in range(reqs)]


def make_inputs(
    reqs: int,
    vocab: int,
    max_k: int,
    *,
    dtype: torch.dtype,
    device: str,
    seed: int | None = None,
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor, int]:
    del dtype
    gen = torch.Generator(device="cpu")
    gen.manual_seed(seed if seed is not None else int(torch.randint(0, 2**31 - 1, (1,))))
    logits = torch.randn(reqs, vocab, generator=gen)
    ks = top_ks(reqs, vocab, max_k)
    for r, k in enumerate(ks):
        if k < vocab:
            cut = torch.topk(logits[r], k).values[-1]
            logits[r] = torch.where(logits[r] >= cut, logits[r], float("-inf"))
    cu = torch.arange(reqs + 1, dtype=torch.int32)
    num_sampled = torch.tensor([0 if r % 16 == 3 else 1 for r in range(reqs)], dtype=torch.int32)
    # vLLM: the batch's largest top_k (vocab for a request without one), then bounded
    max_num_kept = min(max(ks), vocab, MAX_COMPACT_SUPPORT)
    return logits.to(device), cu.to(device), num_sampled.to(device), max_num_kept


def reference(
    logits: torch.Tensor,
    cu_num_logits: torch.Tensor,
    num_sampled: torch.Tensor,
    max_num_kept: int,
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """Row by row on the CPU: the finite columns by nonzero, the first max_num_kept of
    them, the count, and the keep flags packed little-endian eight to a byte; a row that
    samples nothing has count 0 and its ids and bitmask left zero."""
    lg = logits.cpu()
    reqs, vocab = lg.shape
    kept = min(max_num_kept, vocab, MAX_COMPACT_SUPPORT)
    cu = cu_num_logits.cpu().tolist()
    ns = num_sampled.cpu().tolist()
    ids = torch.zeros(reqs, kept, dtype=torch.int32)
    counts = torch.zeros(reqs, dtype=torch.int32)
    nbytes = (vocab + 7) // 8
    packed = torch.zeros(reqs, nbytes, dtype=torch.uint8)
    for r in range(reqs):
        if ns[r] < 1:
            continue
        row = lg[cu[r]]
        keep = torch.isfinite(row)
        cols = torch.nonzero(keep).flatten()
        counts[r] = cols.numel()
        first = cols[:kept]
        ids[r, : first.numel()] = first.to(torch.int32)
        flags = torch.zeros(nbytes * 8, dtype=torch.int64)
        flags[:vocab] = keep.long()
        weights = torch.tensor([1 << j for j in range(8)], dtype=torch.int64)
        packed[r] = (flags.view(nbytes, 8) * weights).sum(1).to(torch.uint8)
    return ids.to(logits.device), packed.to(logits.device), counts.to(logits.device)


def torch_sampling_mask(
    logits: torch.Tensor,
    cu_num_logits: torch.Tensor,
    num_sampled: torch.Tensor,
    max_num_kept: int,
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """The same by torch ops over the batch: isfinite, a cumsum for each kept column's
    place, a scatter of the first max_num_kept ids into a zeroed buffer, the flags packed
    by a weighted sum over [bytes, 8]."""
    reqs, vocab = num_sampled.shape[0], logits.shape[1]
    kept = min(max_num_kept, vocab, MAX_COMPACT_SUPPORT)
    active = num_sampled > 0
    rows = logits[cu_num_logits[:-1].long()]
    keep = torch.isfinite(rows) & active[:, None]
    pos = torch.cumsum(keep.to(torch.int32), dim=1) - 1
    counts = keep.sum(1).to(torch.int32)
    take = keep & (pos < kept)
    ids = torch.zeros(reqs, kept + 1, dtype=torch.int32, device=logits.device)
    cols = torch.arange(vocab, device=logits.device, dtype=torch.int32).expand(reqs, vocab)
    ids.scatter_(1, torch.where(take, pos, kept).long(), torch.where(take, cols, 0))
    nbytes = (vocab + 7) // 8
    flags = torch.zeros(reqs, nbytes * 8, dtype=torch.int32, device=logits.device)
    flags[:, :vocab] = keep.to(torch.int32)
    weights = 1 << torch.arange(8, device=logits.device, dtype=torch.int32)
    packed = (flags.view(reqs, nbytes, 8) * weights).sum(-1).to(torch.uint8)
    return ids[:, :kept].contiguous(), packed, counts
