"""vLLM's rejection-sampling logits statistics (the `_compute_local_logits_stats_kernel`
launch of `rejection_sample`, the v1 GPU worker's speculative verification, followed by the
per-row combine that its next kernels make of the partials): inputs, reference, torch
baseline.

A verification step of `reqs` requests, each with `drafts` draft tokens from a draft model
that samples probabilistically (so vLLM caches its full logits), hence drafts + 1 logits rows
per request (the drafts' positions, then the bonus position).  target_logits is
[reqs * (drafts + 1), vocab] fp32 whatever the spec's dtype (the sampling parameters are
applied into vLLM's fp32 buffer before verification); draft_logits [reqs, drafts, vocab] is
the draft logits cache in the spec's dtype (the model's head dtype, before temperature),
indexed by request-state slot (a replicated cache: no row mapping); expanded_idx_mapping
[rows] int32 maps each row to its request's slot (a permutation of the reqs slots, rows of
one request adjacent); expanded_local_pos [rows] int32 is the row's position in its request
(0 .. drafts); temperature [reqs] fp32 per slot, every fourth request greedy (0.0).

The output is, per logits row: the target log-sum-exp (a sampling request's draft rows;
-inf elsewhere), the target argmax (a greedy request's draft rows; 0 elsewhere) and the
log-sum-exp of the draft logits divided by the temperature (a sampling request's draft
rows; -inf elsewhere).  The bonus row of every request gets no statistics."""

from __future__ import annotations

import torch

TEMPERATURES = (0.6, 0.7, 1.0)


def make_inputs(
    reqs: int,
    drafts: int,
    vocab: int,
    *,
    dtype: torch.dtype,
    device: str,
    seed: int | None = None,
) -> tuple[torch.Tensor, ...]:
    """Normal target logits of spread 3 (fp32); draft logits the target's plus normal
    noise of spread 1 (the spec's dtype); slots a permutation; every fourth request greedy,
    the others at a temperature drawn from 0.6, 0.7 and 1.0."""
    gen = torch.Generator(device="cpu")
    gen.manual_seed(seed if seed is not None else int(torch.randint(0, 2**31 - 1, (1,))))
    per = drafts + 1
    rows = reqs * per
    target = torch.randn(rows, vocab, generator=gen) * 3.0
    slots = torch.randperm(reqs, generator=gen).to(torch.int32)
    mapping = slots.repeat_interleave(per)
    local_pos = torch.arange(per, dtype=torch.int32).repeat(reqs)
    draft = torch.empty(reqs, drafts, vocab)
    for r in range(reqs):
        rows_r = target[r * per : r * per + drafts]
        draft[int(slots[r])] = rows_r + torch.randn(drafts, vocab, generator=gen)
    temps = torch.tensor(TEMPERATURES)[torch.randint(0, len(TEMPERATURES), (reqs,), generator=gen)]
    temperature = torch.zeros(reqs, dtype=torch.float32)
    for r in range(reqs):
        temperature[int(slots[r])] = 0.0 if r % 4 == 3 else float(temps[r])
    return (
        target.to(device), draft.to(dtype).to(device), mapping.to(device),
        local_pos.to(device), temperature.to(device),
    )  # fmt: skip


def _row_kinds(
    expanded_idx_mapping: torch.Tensor, expanded_local_pos: torch.Tensor,
    temperature: torch.Tensor,
) -> tuple[torch.Tensor, torch.Tensor]:  # fmt: skip
    """(sampled draft rows, greedy draft rows) as bool masks; a bonus row is the last of
    its request (the next row starts at position 0, or there is none)."""
    pos = expanded_local_pos.long()
    nxt = torch.zeros_like(pos)
    nxt[:-1] = pos[1:]
    draft_row = nxt != 0
    greedy = temperature[expanded_idx_mapping.long()] == 0.0
    return draft_row & ~greedy, draft_row & greedy


def reference(
    target_logits: torch.Tensor, draft_logits: torch.Tensor,
    expanded_idx_mapping: torch.Tensor, expanded_local_pos: torch.Tensor,
    temperature: torch.Tensor,
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:  # fmt: skip
    """Row by row in fp64 on the CPU: the whole row's log-sum-exp and argmax (no blocks),
    the draft row scaled by the temperature in fp32 first, as vLLM divides."""
    t = target_logits.detach().cpu().float()
    d = draft_logits.detach().cpu().float()
    mapping = expanded_idx_mapping.cpu().long()
    pos = expanded_local_pos.cpu().long()
    temp = temperature.cpu().float()
    sampled, greedy = _row_kinds(mapping, pos, temp)
    rows = t.shape[0]
    t_lse = torch.full((rows,), float("-inf"), dtype=torch.float64)
    t_arg = torch.zeros(rows, dtype=torch.int64)
    d_lse = torch.full((rows,), float("-inf"), dtype=torch.float64)
    for r in range(rows):
        if greedy[r]:
            t_arg[r] = int(torch.argmax(t[r]))
        elif sampled[r]:
            slot = int(mapping[r])
            t_lse[r] = torch.logsumexp(t[r].double(), 0)
            scaled = d[slot, int(pos[r])] / temp[slot]
            d_lse[r] = torch.logsumexp(scaled.double(), 0)
    dev = target_logits.device
    return t_lse.float().to(dev), t_arg.to(dev), d_lse.float().to(dev)


def torch_stats(
    target_logits: torch.Tensor, draft_logits: torch.Tensor,
    expanded_idx_mapping: torch.Tensor, expanded_local_pos: torch.Tensor,
    temperature: torch.Tensor,
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:  # fmt: skip
    """The same by torch ops over the batch: whole-row logsumexp and argmax of every row
    in fp32, the draft rows gathered and divided by the temperature, then masked by kind."""
    mapping = expanded_idx_mapping.long()
    pos = expanded_local_pos.long()
    sampled, greedy = _row_kinds(mapping, pos, temperature)
    temp = temperature[mapping]
    drafts = draft_logits.shape[1]
    d = draft_logits[mapping, pos.clamp(max=drafts - 1)].float()
    d_lse = torch.logsumexp(d / torch.where(temp == 0.0, 1.0, temp)[:, None], 1)
    t_lse = torch.logsumexp(target_logits, 1)
    t_arg = torch.argmax(target_logits, 1)
    inf = torch.tensor(float("-inf"), device=target_logits.device)
    return (
        torch.where(sampled, t_lse, inf), torch.where(greedy, t_arg, 0),
        torch.where(sampled, d_lse, inf),
    )  # fmt: skip
