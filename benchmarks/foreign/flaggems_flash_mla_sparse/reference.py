"""DeepSeek-V3.2's sparse MLA prefill (FlashMLA's flash_mla_sparse_fwd contract), for
FlagGems' kernel: inputs, fp32 reference, torch baseline.

q [sq, h, d] (the last sq of skv positions are the queries; each row 512 latent columns,
then the rope ones), kv [skv, 1, d] (one latent row per position, shared by every head; its
first 512 columns are the values) and indices [sq, 1, topk] int32: for each query the
positions the indexer selected, within its causal prefix, -1 where fewer than topk exist.
With s = (q . kv_k) * sm_scale over a token's valid indices k, the outputs are
o [sq, h, 512] = sum_k softmax(s)_k kv_k[:512] in the q dtype, max_logits [sq, h] = max_k s
and lse [sq, h] = log sum_k exp(s), both fp32."""

from __future__ import annotations

import torch

from foreign.flaggems_flash_mla_sparse.launcher import DV, SM_SCALE

CHUNK = 128  # query tokens a step: the trials' gathered rows would not fit at once


def make_inputs(
    sq: int,
    skv: int,
    h: int,
    d: int,
    topk: int,
    *,
    dtype: torch.dtype,
    device: str,
    seed: int | None = None,
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """randn q and kv, and each query's top-k of random indexer scores over its causal
    prefix (positions past it scored -1, kept as index -1; a list longer than the pool is
    padded with -1): a query at position p has min(p + 1, topk) valid indices, so none has
    none.  Drawn on the target device."""
    gen = torch.Generator(device=device)
    gen.manual_seed(seed if seed is not None else int(torch.randint(0, 2**31 - 1, (1,))))
    q = torch.randn(sq, h, d, generator=gen, device=device, dtype=dtype)
    kv = torch.randn(skv, 1, d, generator=gen, device=device, dtype=dtype)
    scores = torch.rand(sq, skv, generator=gen, device=device)
    pos = torch.arange(skv - sq, skv, device=device)[:, None]  # each query's own position
    scores.masked_fill_(torch.arange(skv, device=device)[None, :] > pos, -1.0)
    val, idx = scores.topk(min(topk, skv), dim=-1)
    idx = torch.where(val < 0, torch.full_like(idx, -1), idx).to(torch.int32)
    pad = torch.full((sq, topk - idx.shape[1]), -1, dtype=torch.int32, device=device)
    return q, kv, torch.cat([idx, pad], dim=1)[:, None, :].contiguous()


def _attend(
    q: torch.Tensor, kv: torch.Tensor, indices: torch.Tensor, acc: torch.dtype
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    outs, maxes, lses = [], [], []
    rows = kv[:, 0]
    for start in range(0, q.shape[0], CHUNK):
        idx = indices[start : start + CHUNK, 0]
        gathered = rows[idx.clamp(min=0).long()].to(acc)  # [chunk, topk, d]
        s = torch.einsum("mhd,mkd->mhk", q[start : start + CHUNK].to(acc), gathered)
        s = s.float() * SM_SCALE
        s = s.masked_fill((idx < 0)[:, None, :], float("-inf"))
        mx = s.amax(-1)
        lse = torch.logsumexp(s, -1)
        p = torch.exp(s - lse[..., None])
        o = torch.einsum("mhk,mkd->mhd", p.to(acc), gathered[..., :DV]).float()
        outs.append(o.to(q.dtype))
        maxes.append(mx)
        lses.append(lse)
    return torch.cat(outs), torch.cat(maxes), torch.cat(lses)


def reference(
    q: torch.Tensor, kv: torch.Tensor, indices: torch.Tensor
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    return _attend(q, kv, indices, torch.float32)


def torch_flash_mla_sparse(
    q: torch.Tensor, kv: torch.Tensor, indices: torch.Tensor
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """The gather-then-dense formulation in plain torch, 128 query tokens at a time: the
    selected rows materialized per query, two einsums in the input dtype around an fp32
    softmax."""
    return _attend(q, kv, indices, q.dtype)
