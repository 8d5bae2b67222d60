"""vLLM's GPU n-gram speculator (the `_ngram_scan_kernel` and `_ngram_finalize_kernel`
launches of `NgramGPUSpeculator.propose`, the v1 GPU worker's prompt-lookup drafting):
inputs, reference, torch baseline.

token_ids [reqs, max_model_len] int32 is the request states' token history buffer
(`all_token_ids`, one row per request state, prompt and output tokens packed from column 0;
the columns past a request's length hold stale tokens).  total_len [reqs] int32 is each
state's length, idx_mapping [reqs] int64 maps the batch's requests to their states (a
permutation), num_sampled [reqs] int32 the tokens each request sampled this step (0 for
the request of every eighth state, still in chunked prefill: it gets no drafts),
last_sampled [reqs] int64 each state's last sampled token.  For every request that
sampled, the drafts continue the rightmost earlier occurrence of the longest suffix n-gram
(n from max_n down to min_n) of its history: the spec_tokens tokens that followed it, the
last sampled token where the history runs out; a request with no match, or that sampled
nothing, drafts its last sampled token spec_tokens times.  The output is drafts
[reqs, spec_tokens] int64 in batch order.

The histories are those of code editing and summarisation, where prompt lookup pays: random
tokens of a 128,256-token vocabulary, with the history's last max_n tokens planted earlier
(state s % 4 == 0: a full match; 3: two full matches, the rightmost to be found), only its
last min_n tokens planted (1: a shortest match), or nothing planted (2: chance matches
only).  History lengths fall from seq_len (request state 0) to about seq_len / 2, as
`history_lengths` says."""

from __future__ import annotations

import torch

VOCAB = 128256


def history_lengths(reqs: int, seq_len: int) -> list[int]:
    """Each request state's history length: seq_len for state 0, falling linearly to about
    seq_len / 2."""
    return [seq_len - (s * (seq_len // 2)) // max(reqs, 1) for s in range(reqs)]


def make_inputs(
    reqs: int, seq_len: int, max_model_len: int, min_n: int, max_n: int, spec_tokens: int,
    *, dtype: torch.dtype, device: str, seed: int | None = None,
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor, int, int, int]:  # fmt: skip
    """Integer inputs whatever the dtype (vLLM's token buffers are int32 and int64)."""
    del dtype
    if seq_len > max_model_len or not 1 <= min_n <= max_n:
        raise ValueError("need seq_len <= max_model_len and 1 <= min_n <= max_n")
    gen = torch.Generator(device="cpu")
    gen.manual_seed(seed if seed is not None else int(torch.randint(0, 2**31 - 1, (1,))))
    token_ids = torch.randint(0, VOCAB, (reqs, max_model_len), generator=gen, dtype=torch.int32)
    lengths = history_lengths(reqs, seq_len)
    for s, n_tok in enumerate(lengths):
        kind = s % 4
        plant = min_n if kind == 1 else max_n
        if kind == 2 or n_tok < 2 * plant + 2:
            continue
        suffix = token_ids[s, n_tok - plant : n_tok].clone()
        copies = 2 if kind == 3 else 1
        for _ in range(copies):
            at = int(torch.randint(0, n_tok - 2 * plant - 1, (1,), generator=gen))
            token_ids[s, at : at + plant] = suffix
    total_len = torch.tensor(lengths, dtype=torch.int32)
    idx_mapping = torch.randperm(reqs, generator=gen).to(torch.int64)
    num_sampled = torch.randint(1, spec_tokens + 2, (reqs,), generator=gen, dtype=torch.int32)
    # the requests of every eighth state are still in chunked prefill (nothing sampled)
    num_sampled[idx_mapping % 8 == 7] = 0
    last_sampled = torch.randint(0, VOCAB, (reqs,), generator=gen, dtype=torch.int64)
    return (
        token_ids.to(device), total_len.to(device), idx_mapping.to(device),
        num_sampled.to(device), last_sampled.to(device), min_n, max_n, spec_tokens,
    )  # fmt: skip


def reference(
    token_ids: torch.Tensor, total_len: torch.Tensor, idx_mapping: torch.Tensor,
    num_sampled: torch.Tensor, last_sampled: torch.Tensor, min_n: int, max_n: int,
    spec_tokens: int,
) -> torch.Tensor:  # fmt: skip
    """Request by request on the CPU: every window of each n compared with the suffix
    (torch's unfold), the longest n with a match and its rightmost position taken, the
    drafts read after it."""
    tok = token_ids.cpu().long()
    lens = total_len.cpu().tolist()
    out = torch.empty(idx_mapping.numel(), spec_tokens, dtype=torch.int64)
    for b, (s, sampled) in enumerate(
        zip(idx_mapping.cpu().tolist(), num_sampled.cpu().tolist(), strict=True)
    ):
        last = int(last_sampled[s])
        out[b] = last
        n_tok = lens[s]
        if sampled <= 0 or n_tok < min_n:
            continue
        row = tok[s, :n_tok]
        for n in range(max_n, min_n - 1, -1):
            if n_tok - n - 1 < 0:
                continue
            windows = row[: n_tok - 1].unfold(0, n, 1)  # start positions 0 .. n_tok - n - 1
            hits = (windows == row[n_tok - n :]).all(1).nonzero()
            if hits.numel():
                start = int(hits[-1]) + n
                avail = min(spec_tokens, n_tok - start)
                out[b, :avail] = row[start : start + avail]
                break
    return out.to(token_ids.device)


def torch_ngram(
    token_ids: torch.Tensor, total_len: torch.Tensor, idx_mapping: torch.Tensor,
    num_sampled: torch.Tensor, last_sampled: torch.Tensor, min_n: int, max_n: int,
    spec_tokens: int,
) -> torch.Tensor:  # fmt: skip
    """The same by batched torch ops on the device: every window of the batch's padded
    histories compared with each request's suffix for each n (unfold), the best packed
    (n, position) score taken by one max, the drafts gathered."""
    dev = token_ids.device
    b = idx_mapping.numel()
    rows = token_ids[idx_mapping].long()  # [b, L]
    lens = total_len[idx_mapping].long()
    width = int(lens.max())
    rows = rows[:, :width]
    pos = torch.arange(width, device=dev)
    lp1 = token_ids.shape[1] + 1
    best = torch.zeros(b, dtype=torch.int64, device=dev)
    for n in range(min_n, max_n + 1):
        if width < n + 1:
            continue
        suf_idx = (lens[:, None] - n + torch.arange(n, device=dev)).clamp_min(0)
        suffix = rows.gather(1, suf_idx)  # [b, n]
        windows = rows[:, : width - 1].unfold(1, n, 1)  # [b, width - n, n]
        match = (windows == suffix[:, None, :]).all(-1)
        p = pos[: match.shape[1]]
        match &= p[None, :] <= (lens[:, None] - n - 1)
        score = torch.where(match, n * lp1 + p[None, :] + 1, 0).amax(1)
        best = torch.maximum(best, score)
    eligible = (num_sampled > 0) & (lens >= min_n) & (best > 0)
    s1 = best - 1
    start = (s1 // lp1) + (s1 % lp1)
    k = torch.arange(spec_tokens, device=dev)
    idx = (start[:, None] + k).clamp(max=width - 1)
    gathered = rows.gather(1, idx)
    ok = eligible[:, None] & (k[None, :] < (lens - start)[:, None])
    return torch.where(ok, gathered, last_sampled[idx_mapping][:, None])
