"""vLLM's combined top-k / top-p filter (the `_topk_topp_kernel` launch of
`apply_top_k_top_p_triton`, the v1 sampler's Triton path): inputs, reference, torch baseline.

A decoding step of `reqs` requests, one fp32 logits row each, every request sampling with a
top-k and a top-p (Qwen3's recommended settings are top_k 20 with top_p 0.8 or 0.95).  logits
is [reqs, vocab] fp32 whatever the spec's dtype (vLLM's sampler works on an fp32 copy); k
[reqs] int32 and p [reqs] fp32 are the rows' values.  The output is the logits with every
value outside the row's kept set set to -inf, in place: the k largest logits, then among them
the fewest largest whose softmax probabilities (over those k) sum to at least p.

Each row is a random permutation of `vocab` distinct normal quantiles of spread 3 plus a
per-row shift, so there are no ties and the gaps near the top are those of a real logits row
without its rare near-ties; each request's k is drawn from (20, 40, 50) (at most vocab / 8)
and its p from (0.8, 0.9, 0.95), then moved to the middle of the gap between the two
cumulative probabilities it falls between, so no fp32 rounding can change the kept set."""

from __future__ import annotations

import torch

TOP_KS = (20, 40, 50)
TOP_PS = (0.8, 0.9, 0.95)


def _kept(row: torch.Tensor, k: int, p: float) -> torch.Tensor:
    """Indices of the kept logits of one fp64 row: its top k, then the top-p prefix."""
    vals, idx = torch.sort(row, descending=True)
    vals, idx = vals[:k], idx[:k]
    probs = torch.softmax(vals, dim=0)
    cum = torch.cumsum(probs, dim=0)
    keep = int(torch.searchsorted(cum, torch.tensor([p], dtype=cum.dtype)).item()) + 1
    return idx[: min(keep, k)]


def make_inputs(
    reqs: int,
    vocab: int,
    *,
    dtype: torch.dtype,
    device: str,
    seed: int | None = None,
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    del dtype  # fp32 logits whatever the spec's dtype, as vLLM's sampler has them
    gen = torch.Generator(device="cpu")
    gen.manual_seed(seed if seed is not None else int(torch.randint(0, 2**31 - 1, (1,))))
    q = (torch.arange(vocab, dtype=torch.float64) + 0.5) / vocab
    base = torch.special.ndtri(q) * 3.0
    logits = torch.empty(reqs, vocab, dtype=torch.float32)
    ks = torch.empty(reqs, dtype=torch.int32)
    ps = torch.empty(reqs, dtype=torch.float32)
    kmax = max(1, vocab // 8)
    for r in range(reqs):
        shift = float(torch.randn((), generator=gen, dtype=torch.float64)) * 2.0
        row = (base + shift)[torch.randperm(vocab, generator=gen)].to(torch.float32)
        logits[r] = row
        k = min(TOP_KS[int(torch.randint(0, len(TOP_KS), (1,), generator=gen))], kmax)
        p = TOP_PS[int(torch.randint(0, len(TOP_PS), (1,), generator=gen))]
        top = torch.sort(row.double(), descending=True).values[:k]
        cum = torch.cumsum(torch.softmax(top, dim=0), dim=0)
        j = int(torch.searchsorted(cum, torch.tensor([p], dtype=cum.dtype)).item())
        j = min(j, k - 1)
        lo = float(cum[j - 1]) if j > 0 else 0.0
        ks[r] = k
        ps[r] = (lo + float(cum[j])) / 2.0
    return logits.to(device), ks.to(device), ps.to(device)


def reference(logits: torch.Tensor, k: torch.Tensor, p: torch.Tensor) -> torch.Tensor:
    """Row by row in fp64: sort, keep the top k, their softmax, the shortest prefix whose sum
    reaches p; everything else -inf."""
    src = logits.detach().cpu().double()
    out = torch.full_like(src, float("-inf"))
    for r, (kk, pp) in enumerate(zip(k.cpu().tolist(), p.cpu().tolist(), strict=True)):
        idx = _kept(src[r], int(kk), float(pp))
        out[r, idx] = src[r, idx]
    return out.float().to(logits.device)


def torch_topk_topp(logits: torch.Tensor, k: torch.Tensor, p: torch.Tensor) -> torch.Tensor:
    """vLLM's torch path (apply_top_k_top_p's sort-based masking) by torch ops, in place:
    one sort per row, the k-th value as a threshold, an ascending cumulative softmax masked
    at 1 - p (the top token always kept)."""
    vals, idx = logits.sort(dim=-1, descending=False)
    kth = vals.gather(1, (vals.shape[1] - k.long()).unsqueeze(1))
    vals = vals.masked_fill(vals < kth, float("-inf"))
    cum = vals.softmax(dim=-1).cumsum(dim=-1)
    drop = cum <= 1 - p.unsqueeze(1)
    drop[:, -1] = False
    vals = vals.masked_fill(drop, float("-inf"))
    return logits.scatter_(1, idx, vals)
