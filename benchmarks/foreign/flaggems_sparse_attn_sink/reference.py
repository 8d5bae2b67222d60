"""Top-k sparse attention over a shared latent KV with a per-head attention sink, for
FlagGems' kernel: inputs, fp32 reference, torch baseline.

q [b, m, h, d] (the last m of each batch row's n positions are the queries), kv [b, n, d]
shared by every head (MLA's latent rows, as DeepSeek's sparse attention reads them),
attn_sink [h] fp32 logits, and topk_idxs [b, m, topk] int32: for each query the positions
an indexer selected, at most its causal prefix, -1 where fewer than topk exist.  The
output o [b, m, h, d] = sum_k softmax'(q . kv_k * d^-1/2) kv_k, where the softmax's
denominator also holds exp(sink_h)."""

from __future__ import annotations

import torch


def make_inputs(
    b: int,
    m: int,
    h: int,
    d: int,
    n: int,
    topk: int,
    *,
    dtype: torch.dtype,
    device: str,
    seed: int | None = None,
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor]:
    """randn q and kv, randn sinks, and each query's top-k of random indexer scores over its
    causal prefix (positions past it scored -1, kept as index -1).  Drawn on the target
    device: the prefill trial's indexer scores are 33 M values."""
    gen = torch.Generator(device=device)
    gen.manual_seed(seed if seed is not None else int(torch.randint(0, 2**31 - 1, (1,))))
    q = torch.randn(b, m, h, d, generator=gen, device=device, dtype=dtype)
    kv = torch.randn(b, n, d, generator=gen, device=device, dtype=dtype)
    sink = torch.randn(h, generator=gen, device=device, dtype=torch.float32)
    scores = torch.rand(b, m, n, generator=gen, device=device)
    pos = torch.arange(n - m, n, device=device)[:, None]  # each query's own position
    scores.masked_fill_(torch.arange(n, device=device)[None, :] > pos, -1.0)
    val, idx = scores.topk(topk, dim=-1)
    idx = torch.where(val < 0, torch.full_like(idx, -1), idx).to(torch.int32)
    return q, kv, sink, idx


def _attend(
    q: torch.Tensor, kv: torch.Tensor, sink: torch.Tensor, idx: torch.Tensor, acc: torch.dtype
) -> torch.Tensor:
    b, _, _, d = q.shape
    rows = torch.arange(b, device=q.device)[:, None, None]
    gathered = kv[rows, idx.clamp(min=0).long()].to(acc)  # [b, m, topk, d]
    s = torch.einsum("bmhd,bmkd->bmhk", q.to(acc), gathered).float() * d**-0.5
    s = s.masked_fill((idx < 0)[:, :, None, :], float("-inf"))
    mx = s.amax(-1, keepdim=True)
    p = torch.exp(s - mx)
    den = p.sum(-1) + torch.exp(sink.float()[None, None, :] - mx[..., 0])
    o = torch.einsum("bmhk,bmkd->bmhd", p.to(acc), gathered).float() / den[..., None]
    return o.to(q.dtype)


def reference(
    q: torch.Tensor, kv: torch.Tensor, sink: torch.Tensor, idx: torch.Tensor
) -> torch.Tensor:
    return _attend(q, kv, sink, idx, torch.float32)


def torch_sparse_attn_sink(
    q: torch.Tensor, kv: torch.Tensor, sink: torch.Tensor, idx: torch.Tensor
) -> torch.Tensor:
    """The gather-then-dense formulation in plain torch: the selected rows materialized per
    query, two einsums in the input dtype around an fp32 softmax with the sink."""
    return _attend(q, kv, sink, idx, q.dtype)
