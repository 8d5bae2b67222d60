"""Qwen4Exp's per-layer-embedding n-gram hash ids (the `_ple_ngram_ids_kernel` launch of
`ple_ngram_ids`, which vLLM's Qwen4Exp n-gram embedding runs on CUDA before each PLE
layer's table lookup): inputs, reference, torch baseline.

A step's `tokens` token ids (int32, Qwen's 151,936-token vocabulary) are packed request
after request as query_start_loc [reqs + 1] int32 says: the lengths are a fixed function of
the dims (`request_lengths`), uneven, every request at least one token.  ngram_context
[reqs, ngram - 1] int32 holds each request's last tokens before the step (its n-gram
lookback), with an EOS among them in every fifth request and the EOS id inside the step in
a few places (older tokens behind an EOS hash as EOS).  The layer's multipliers [ngram]
int64 are odd and bounded by 2^63 / vocab (no product overflows, as vLLM builds them); the
heads' table sizes [(ngram - 1) x heads] int64 are consecutive primes above the table base
and their offsets the running sum.  The output is [tokens, (ngram - 1) x heads] int64 ids:
for head g of order n = g // heads + 2, (XOR of token[t - i] x multiplier[i] for i < n)
mod size[g] + offset[g]."""

from __future__ import annotations

import torch

VOCAB = 151936  # Qwen3 / Qwen3.5's vocabulary
EOS = 151645  # <|im_end|>
TABLE_BASE = 1_000_003  # rows per head's table, before rounding up to a prime


def request_lengths(tokens: int, reqs: int) -> list[int]:
    """Uneven lengths summing to `tokens`: request r gets a share growing with r % 3."""
    if reqs > tokens:
        raise ValueError("every request needs a token")
    weights = [1 + (r % 3) for r in range(reqs)]
    total = sum(weights)
    lens = [max(1, tokens * w // total) for w in weights]
    lens[-1] += tokens - sum(lens)
    while lens[-1] < 1:  # pragma: no cover - only for tiny odd dims
        i = max(range(reqs), key=lambda k: lens[k])
        lens[i] -= 1
        lens[-1] += 1
    return lens


def _is_prime(n: int) -> bool:
    if n < 2:
        return False
    f = 2
    while f * f <= n:
        if n % f == 0:
            return False
        f += 1
    return True


def table_sizes(count: int) -> list[int]:
    """`count` consecutive primes above TABLE_BASE - 1 (vLLM's `_nth_prime_after`)."""
    sizes, p = [], TABLE_BASE - 1
    while len(sizes) < count:
        p += 1
        if _is_prime(p):
            sizes.append(p)
    return sizes


def make_inputs(
    tokens: int,
    reqs: int,
    ngram: int,
    heads: int,
    *,
    dtype: torch.dtype,
    device: str,
    seed: int | None = None,
) -> tuple[torch.Tensor, ...]:
    """Integers whatever the dtype."""
    del dtype
    gen = torch.Generator(device="cpu")
    gen.manual_seed(seed if seed is not None else int(torch.randint(0, 2**31 - 1, (1,))))
    ctx_len = ngram - 1
    ids = torch.randint(0, VOCAB, (tokens,), generator=gen, dtype=torch.int64)
    ids[torch.randperm(tokens, generator=gen)[: max(1, tokens // 64)]] = EOS
    qsl = torch.zeros(reqs + 1, dtype=torch.int64)
    qsl[1:] = torch.cumsum(torch.tensor(request_lengths(tokens, reqs)), 0)
    ctx = torch.randint(0, VOCAB, (reqs, ctx_len), generator=gen, dtype=torch.int64)
    ctx[::5, -1] = EOS
    bound = max(1, ((1 << 63) - 1) // VOCAB // 2)
    mults = torch.randint(0, bound, (ngram,), generator=gen, dtype=torch.int64) * 2 + 1
    sizes = torch.tensor(table_sizes(ctx_len * heads), dtype=torch.int64)
    offsets = torch.zeros_like(sizes)
    offsets[1:] = torch.cumsum(sizes, 0)[:-1]
    return (
        ids.to(torch.int32).to(device), qsl.to(torch.int32).to(device),
        ctx.to(torch.int32).to(device), mults.to(device), sizes.to(device),
        offsets.to(device), EOS, heads,
    )  # fmt: skip


def reference(
    input_ids: torch.Tensor,
    query_start_loc: torch.Tensor,
    ngram_context: torch.Tensor,
    multipliers: torch.Tensor,
    sizes: torch.Tensor,
    offsets: torch.Tensor,
    eos: int,
    heads: int,
) -> torch.Tensor:
    """Token by token in Python integers: its request's history (the lookback, then the
    step's tokens), the older tokens behind the first EOS (walking back) replaced by EOS,
    each n-gram's XOR of products taken modulo its heads' primes."""
    ids = input_ids.cpu().tolist()
    qsl = query_start_loc.cpu().tolist()
    ctx = ngram_context.cpu().tolist()
    mult = multipliers.cpu().tolist()
    size = sizes.cpu().tolist()
    off = offsets.cpu().tolist()
    ctx_len = len(ctx[0]) if ctx else 0
    out = []
    for r in range(len(qsl) - 1):
        history = ctx[r] + ids[qsl[r] : qsl[r + 1]]
        for t in range(qsl[r], qsl[r + 1]):
            here = ctx_len + t - qsl[r]
            prev, crossed = [], False
            for shift in range(1, ctx_len + 1):
                tok = eos if crossed else history[here - shift]
                crossed = crossed or tok == eos
                prev.append(tok)
            row = []
            for g in range(ctx_len * heads):
                order = g // heads + 2
                h = history[here] * mult[0]
                for shift in range(1, order):
                    h ^= prev[shift - 1] * mult[shift]
                row.append(h % size[g] + off[g])
            out.append(row)
    return torch.tensor(out, dtype=torch.int64).to(input_ids.device)


def torch_ngram_ids(
    input_ids: torch.Tensor,
    query_start_loc: torch.Tensor,
    ngram_context: torch.Tensor,
    multipliers: torch.Tensor,
    sizes: torch.Tensor,
    offsets: torch.Tensor,
    eos: int,
    heads: int,
) -> torch.Tensor:
    """The same by torch ops over the step (vLLM's own non-CUDA path, in outline): each
    token's request by searchsorted, the shifted tokens gathered from the step or the
    lookback, an EOS mask carried by cumulative max, XOR of products, remainder."""
    ids = input_ids.long()
    qsl = query_start_loc.long()
    ctx = ngram_context.long()
    ctx_len = ctx.shape[1]
    tokens = ids.shape[0]
    t = torch.arange(tokens, device=ids.device)
    req = torch.searchsorted(qsl[1:], t, right=True)
    pos = t - qsl[req]
    mixed = (ids * multipliers[0])[:, None].expand(tokens, ctx_len * heads).clone()
    order = torch.arange(ctx_len * heads, device=ids.device) // heads + 2
    crossed = torch.zeros(tokens, dtype=torch.bool, device=ids.device)
    for shift in range(1, ctx_len + 1):
        in_step = pos >= shift
        step_tok = ids[(t - shift).clamp_min(0)]
        ctx_tok = ctx[req, (ctx_len - shift + pos).clamp(0, max(ctx_len - 1, 0))]
        cand = torch.where(in_step, step_tok, ctx_tok)
        cand = torch.where(crossed, torch.full_like(cand, eos), cand)
        crossed = crossed | (cand == eos)
        term = cand * multipliers[shift]
        mixed = mixed ^ torch.where((order > shift)[None, :], term[:, None], 0)
    return torch.remainder(mixed, sizes[None, :]) + offsets[None, :]
