"""vLLM's min-p filter (the `_min_p_kernel` launch of `apply_min_p`, the v1 GPU worker's
sampler after the temperature): inputs, reference, torch baseline.

A decoding step of `reqs` requests, each with `qlen` logits rows (its sampled position and
its speculative drafts), every request sampling with a min-p.  logits is [reqs * qlen, vocab]
fp32 whatever the spec's dtype (vLLM's sampler copies the LM head's logits into a new fp32
tensor before its processors); expanded_idx_mapping [reqs * qlen] int32 maps each row to its
request's slot in the persistent batch state (a permutation of 2 * reqs slots, rows of one
request adjacent); min_p [2 * reqs] fp32 is the state's per-slot value (0 in the unused
slots).  The output is the logits with every value below max + log(min_p) of its row set to
-inf, in place.

The logits are multiples of 1/64 and every min-p is exp(-(k + 1/2) / 64) for an integer k, so
the threshold max + log(min_p) lies half a grid step from any logit: the kernel's fp32 log
and the reference's cannot round a logit to different sides of it."""

from __future__ import annotations

import math

import torch

# min-p values exp(-(k + 1/2) / 64) near 0.05, 0.1 and 0.2 (common serving settings)
MIN_P_STEPS = (191, 147, 102)


def make_inputs(
    reqs: int,
    qlen: int,
    vocab: int,
    *,
    dtype: torch.dtype,
    device: str,
    seed: int | None = None,
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """Normal logits of spread 3 on a 1/64 grid; each request's min-p drawn from the three
    steps, its slot from a permutation of 2 * reqs."""
    del dtype  # fp32 logits whatever the spec's dtype, as vLLM's sampler has them
    gen = torch.Generator(device="cpu")
    gen.manual_seed(seed if seed is not None else int(torch.randint(0, 2**31 - 1, (1,))))
    rows = reqs * qlen
    logits = torch.round(torch.randn(rows, vocab, generator=gen) * 3.0 * 64.0) / 64.0
    slots = torch.randperm(2 * reqs, generator=gen)[:reqs].to(torch.int32)
    mapping = slots.repeat_interleave(qlen)
    steps = torch.tensor(MIN_P_STEPS, dtype=torch.float64)
    pick = steps[torch.randint(0, len(MIN_P_STEPS), (reqs,), generator=gen)]
    min_p = torch.zeros(2 * reqs, dtype=torch.float32)
    min_p[slots.long()] = torch.exp(-(pick + 0.5) / 64.0).to(torch.float32)
    return logits.to(device), mapping.to(device), min_p.to(device)


def reference(
    logits: torch.Tensor, expanded_idx_mapping: torch.Tensor, min_p: torch.Tensor
) -> torch.Tensor:
    """Row by row on an fp64 copy: the row's maximum, the threshold max + log(min_p) (its
    exact value, half a grid step from any logit), the values below it set to -inf."""
    out = logits.detach().cpu().double().clone()
    p = min_p.cpu().double()
    for row, slot in enumerate(expanded_idx_mapping.cpu().tolist()):
        mp = float(p[slot])
        if mp == 0.0:
            continue
        threshold = float(out[row].max()) + math.log(mp)
        out[row][out[row] < threshold] = float("-inf")
    return out.float().to(logits.device)


def torch_min_p(
    logits: torch.Tensor, expanded_idx_mapping: torch.Tensor, min_p: torch.Tensor
) -> torch.Tensor:
    """The same by torch ops over the batch, in place: the rows' maxima, their thresholds,
    one masked_fill (rows whose min-p is 0 keep everything)."""
    p = min_p[expanded_idx_mapping.long()]
    threshold = logits.amax(dim=-1) + torch.log(p)
    drop = (logits < threshold[:, None]) & (p[:, None] > 0)
    return logits.masked_fill_(drop, float("-inf"))
