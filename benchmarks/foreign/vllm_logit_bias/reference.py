"""vLLM's logit-bias processor (the `_bias_kernel` launch of `apply_logit_bias`, the v1 GPU
worker's sampler): inputs, reference, torch baseline.

A decoding step of `reqs` requests, one fp32 logits row each (vLLM's sampler copy), in a
persistent batch state of 2 * reqs slots (the rows' slots a permutation).  Request r uses,
by r mod 4: 0, an allowed-token list of `allowed` ids (vLLM's `allowed_token_ids`: every
other logit set to -inf); 1, a logit_bias of `biased` ids (OpenAI's `logit_bias`, added to
the logits); 2, min_tokens not yet reached with three stop ids (the vocabulary's last three
ids, where the models keep their end-of-turn tokens: set to -inf); 3, all three; and the
last request none.  The state's tables are vLLM's widths (1024 allowed ids, 1024 biased
ids, 128 stop ids per slot), ids distinct within a list, biases multiples of 1/8 in [-8, 8].
The output is the logits, in place."""

from __future__ import annotations

import torch

MAX_ALLOWED = 1024  # MAX_NUM_ALLOWED_TOKEN_IDS
MAX_BIAS = 1024  # MAX_NUM_LOGIT_BIAS_TOKENS
MAX_STOPS = 128  # MAX_NUM_STOP_TOKEN_IDS
STOPS = 3


def make_inputs(
    reqs: int,
    vocab: int,
    allowed: int,
    biased: int,
    *,
    dtype: torch.dtype,
    device: str,
    seed: int | None = None,
) -> tuple[torch.Tensor, ...]:
    del dtype  # fp32 logits whatever the spec's dtype, as vLLM's sampler has them
    gen = torch.Generator(device="cpu")
    gen.manual_seed(seed if seed is not None else int(torch.randint(0, 2**31 - 1, (1,))))
    slots = 2 * reqs
    logits = torch.round(torch.randn(reqs, vocab, generator=gen) * 3.0 * 64.0) / 64.0
    mapping = torch.randperm(slots, generator=gen)[:reqs].to(torch.int32)
    pos = torch.randint(0, 4096, (reqs,), generator=gen, dtype=torch.int32)
    n_allowed = torch.zeros(slots, dtype=torch.int32)
    allowed_ids = torch.zeros(slots, MAX_ALLOWED, dtype=torch.int32)
    n_bias = torch.zeros(slots, dtype=torch.int32)
    bias_ids = torch.zeros(slots, MAX_BIAS, dtype=torch.int32)
    bias = torch.zeros(slots, MAX_BIAS, dtype=torch.float32)
    min_lens = torch.zeros(slots, dtype=torch.int32)
    n_stop = torch.zeros(slots, dtype=torch.int32)
    restore = torch.zeros(slots, dtype=torch.int32)
    stop_ids = torch.zeros(slots, MAX_STOPS, dtype=torch.int32)
    for r in range(reqs):
        s = int(mapping[r])
        kind = r % 4
        if r == reqs - 1 and reqs > 1:
            min_lens[s] = int(pos[r])  # min_tokens reached
            continue
        if kind in (0, 3):
            n_allowed[s] = allowed
            allowed_ids[s, :allowed] = torch.randperm(vocab, generator=gen)[:allowed].int()
        if kind in (1, 3):
            n_bias[s] = biased
            bias_ids[s, :biased] = torch.randperm(vocab, generator=gen)[:biased].int()
            b = torch.randint(-64, 65, (biased,), generator=gen).float() / 8.0
            bias[s, :biased] = b
        if kind in (2, 3):
            n_stop[s] = STOPS
            stop_ids[s, :STOPS] = torch.arange(vocab - STOPS, vocab, dtype=torch.int32)
            min_lens[s] = int(pos[r]) + 2 + r  # not yet reached: pos + 1 < min_len
        else:
            min_lens[s] = int(pos[r])
    out = (logits, mapping, pos, n_allowed, allowed_ids, n_bias, bias_ids, bias, min_lens,
           n_stop, restore, stop_ids)  # fmt: skip
    return tuple(t.to(device) for t in out)


def reference(
    logits: torch.Tensor, mapping: torch.Tensor, pos: torch.Tensor, n_allowed: torch.Tensor,
    allowed_ids: torch.Tensor, n_bias: torch.Tensor, bias_ids: torch.Tensor,
    bias: torch.Tensor, min_lens: torch.Tensor, n_stop: torch.Tensor, restore: torch.Tensor,
    stop_ids: torch.Tensor,
) -> torch.Tensor:  # fmt: skip
    """Row by row in fp32 on the CPU: the allowed list (all else -inf), the biases added,
    the stop ids set to -inf while min_tokens is not reached."""
    del restore  # structured outputs off: vLLM launches with CHECK_ALL_MASKED_ROWS False
    out = logits.detach().cpu().clone()
    for row, s in enumerate(mapping.cpu().tolist()):
        na = int(n_allowed[s])
        if na > 0:
            ids = allowed_ids[s, :na].long().cpu()
            keep = out[row, ids].clone()
            out[row] = float("-inf")
            out[row, ids] = keep
        nb = int(n_bias[s])
        if nb > 0:
            ids = bias_ids[s, :nb].long().cpu()
            out[row, ids] = out[row, ids] + bias[s, :nb].cpu()
        ns = int(n_stop[s])
        if ns > 0 and int(pos[row]) + 1 < int(min_lens[s]):
            out[row, stop_ids[s, :ns].long().cpu()] = float("-inf")
    return out.to(logits.device)


def torch_logit_bias(
    logits: torch.Tensor, mapping: torch.Tensor, pos: torch.Tensor, n_allowed: torch.Tensor,
    allowed_ids: torch.Tensor, n_bias: torch.Tensor, bias_ids: torch.Tensor,
    bias: torch.Tensor, min_lens: torch.Tensor, n_stop: torch.Tensor, restore: torch.Tensor,
    stop_ids: torch.Tensor,
) -> torch.Tensor:  # fmt: skip
    """The same by batched torch ops, in place: padded id lists gathered per row, a mask
    scattered for the allowed ids, index_put for the biases and the stops."""
    del restore
    m = mapping.long()
    rows = torch.arange(logits.shape[0], device=logits.device)
    col = torch.arange(allowed_ids.shape[1], device=logits.device)
    a_ids = allowed_ids[m].long()
    a_on = col[None, :] < n_allowed[m][:, None]
    has = n_allowed[m] > 0
    keep = torch.zeros_like(logits, dtype=torch.int32)
    keep.scatter_add_(1, torch.where(a_on, a_ids, 0), a_on.to(torch.int32))
    logits.masked_fill_(has[:, None] & (keep == 0), float("-inf"))
    b_on = col[None, : bias_ids.shape[1]] < n_bias[m][:, None]
    b_ids = bias_ids[m].long()
    b_val = torch.where(b_on, bias[m], 0.0)
    logits.scatter_add_(1, torch.where(b_on, b_ids, 0), b_val)
    scol = torch.arange(stop_ids.shape[1], device=logits.device)
    s_on = (scol[None, :] < n_stop[m][:, None]) & ((pos + 1) < min_lens[m])[:, None]
    r_idx = rows[:, None].expand_as(s_on)[s_on]
    logits[r_idx, stop_ids[m].long()[s_on]] = float("-inf")
    return logits
