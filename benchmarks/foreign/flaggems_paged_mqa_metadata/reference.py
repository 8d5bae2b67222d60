"""FlagGems' paged MQA logits schedule (`get_paged_mqa_logits_metadata`, DeepGEMM's function
of the same name for DeepSeek-V3.2's lightning indexer): inputs, reference, torch baseline.

context_lens is [batch] int32, each decode request's KV length (the indexer's `seq_lens`);
num_sms is the SM count that the paged MQA logits kernel spreads over.  Each request is cut
into ceil(len / 256) segments of 256 tokens (FlagGems' SPLIT_KV); the batch's segments,
request after request, are dealt out evenly to the SMs (the first total % num_sms SMs get
one more).  The output is [num_sms + 1, 2] int32: for each SM (and one past the last), the
request holding its first segment and that segment's index within the request.  The data
is integers whatever the spec's dtype."""

from __future__ import annotations

import torch

SPLIT_KV = 256  # FlagGems' (and DeepGEMM's) segment of the schedule, in tokens


def make_inputs(
    batch: int, num_sms: int, *, dtype: torch.dtype, device: str, seed: int | None = None
) -> tuple[torch.Tensor, int]:
    """Context lengths of 0 to 32,768 tokens (every eighth request exactly on a 256-token
    boundary, a few empty), int32 as DeepGEMM takes them."""
    del dtype
    gen = torch.Generator(device="cpu")
    gen.manual_seed(seed if seed is not None else int(torch.randint(0, 2**31 - 1, (1,))))
    lens = torch.randint(1, 32769, (batch,), generator=gen)
    lens[::8] = (lens[::8] // SPLIT_KV) * SPLIT_KV
    return lens.to(dtype=torch.int32, device=device), num_sms


def reference(context_lens: torch.Tensor, num_sms: int) -> torch.Tensor:
    """SM by SM in Python integers: its first global segment, then a walk over the requests'
    segment counts to the request holding it."""
    segs = [(int(n) + SPLIT_KV - 1) // SPLIT_KV for n in context_lens.cpu()]
    total = sum(segs)
    q, r = divmod(total, num_sms)
    out = torch.zeros(num_sms + 1, 2, dtype=torch.int32)
    for sm in range(num_sms + 1):
        start = sm * q + min(sm, r)
        req, before = 0, 0
        while req < len(segs) and before + segs[req] <= start:
            before += segs[req]
            req += 1
        out[sm, 0] = req
        out[sm, 1] = start - before
    return out.to(context_lens.device)


def torch_schedule(context_lens: torch.Tensor, num_sms: int) -> torch.Tensor:
    """The same schedule by torch ops: a cumsum of the segment counts and a searchsorted of
    every SM's first segment."""
    segs = (context_lens.long() + SPLIT_KV - 1) // SPLIT_KV
    prefix = torch.cumsum(segs, 0)
    total = prefix[-1]
    sm = torch.arange(num_sms + 1, device=context_lens.device)
    starts = sm * (total // num_sms) + torch.minimum(sm, total % num_sms)
    req = torch.searchsorted(prefix, starts, right=True)
    before = torch.where(req > 0, prefix[(req - 1).clamp(min=0)], torch.zeros_like(req))
    return torch.stack([req, starts - before], 1).to(torch.int32)
