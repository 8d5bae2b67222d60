"""DSpark's precomputed Gumbel noise (Kimi K3's fused Markov draft sampling, vLLM
`_markov_noise_kernel`): inputs, reference, torch baseline.

idx_map [reqs, steps] int64 names the request slot of each sampled row and draft step
(vLLM's `sample_idx_mapping`; -1 would mark an inert row), pos [reqs, steps] int64 the
position of each step's sampled token (`sample_pos`), seeds [slots] int64 the per-slot
request seeds.  For each (row, step, token id v) the noise is the argument of the outer log
of the draft's fp32 Gumbel noise -log(-log1p(-u)): -log1p(-u), with u = murmur3(seed of the
slot xor step << 32, pos - 1 + 2**30, v) mapped to (0, 1) from the hash's two 16-bit halves,
the log1p by an 8-term series below 1/4 and directly above.  The output is [reqs, steps,
vocab] fp32 whatever the dtype."""

from __future__ import annotations

import torch

from foreign.vllm_gumbel_sample.reference import murmur3

DRAFT_NOISE_SALT = 1 << 30  # markov.py's _DRAFT_NOISE_SALT


def make_inputs(
    reqs: int, steps: int, vocab: int, slots: int, *, dtype: torch.dtype, device: str,
    seed: int | None = None,
) -> tuple[torch.Tensor, ...]:  # fmt: skip
    """`reqs` requests at random slots of a `slots`-slot pool, each sampling `steps` draft
    tokens at consecutive positions after a prompt of up to 32k tokens; random 63-bit seeds.
    `vocab` sizes the output only (passed on as an int)."""
    del dtype  # the noise is fp32
    if slots < reqs:
        raise ValueError("the slot pool must hold every request")
    gen = torch.Generator(device=device)
    gen.manual_seed(seed if seed is not None else int(torch.randint(0, 2**31 - 1, (1,))))
    slot = torch.randperm(slots, generator=gen, device=device)[:reqs]
    idx_map = slot[:, None].expand(reqs, steps).contiguous().to(torch.int64)
    start = torch.randint(1, 32768, (reqs, 1), generator=gen, device=device, dtype=torch.int64)
    pos = start + torch.arange(1, steps + 1, device=device, dtype=torch.int64)[None, :]
    seeds = torch.randint(0, 2**63 - 1, (slots,), generator=gen, device=device, dtype=torch.int64)
    return idx_map, pos, seeds, vocab


def _log_arg(seed: torch.Tensor, pos: torch.Tensor, column: torch.Tensor) -> torch.Tensor:
    """-log1p(-u) of the hash's uniform, as vLLM's `_log1p_neg_stable` computes it."""
    r = murmur3(seed, pos, column)
    u = (r >> 16).float() * 1.52587890625e-05 + (
        (r & 0xFFFF).float() + 0.5
    ) * 2.3283064365386963e-10
    poly = torch.full_like(u, 1.0 / 8.0)
    for c in (7.0, 6.0, 5.0, 4.0, 3.0, 2.0, 1.0):
        poly = 1.0 / c + u * poly
    series = -u * poly
    direct = torch.log(torch.clamp(1.0 - u, min=5.960464477539063e-08))
    return -torch.where(u < 0.25, series, direct)


def torch_markov_noise(
    idx_map: torch.Tensor, pos: torch.Tensor, seeds: torch.Tensor, vocab: int
) -> torch.Tensor:
    """The whole [reqs, steps, vocab] field by torch ops: the hash in int64, one pass."""
    steps = idx_map.shape[1]
    step = torch.arange(steps, device=idx_map.device, dtype=torch.int64)[None, :]
    slot = idx_map.long()
    seed = torch.where(slot >= 0, seeds[slot.clamp(min=0)], torch.zeros_like(slot))
    seed = seed ^ (step << 32)
    p = pos.long() - 1 + DRAFT_NOISE_SALT
    column = torch.arange(vocab, device=idx_map.device, dtype=torch.int64)
    return _log_arg(seed[:, :, None], p[:, :, None], column[None, None, :])


def reference(
    idx_map: torch.Tensor, pos: torch.Tensor, seeds: torch.Tensor, vocab: int
) -> torch.Tensor:
    """Row by row (a request's steps at once) by the same ops."""
    out = [
        torch_markov_noise(idx_map[r : r + 1], pos[r : r + 1], seeds, vocab)
        for r in range(idx_map.shape[0])
    ]
    return torch.cat(out, 0)
