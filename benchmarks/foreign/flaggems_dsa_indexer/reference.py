"""DeepSeek-V3.2's lightning indexer logits over a ragged prefill batch, for FlagGems'
kernel: inputs, fp32 reference, torch baseline.

`seqs` sequences of `ctx` positions each are packed one after another into the key rows
kv [seqs * ctx, d] (one key row per position, shared by every indexer head); the last `m`
positions of each sequence are its query tokens, packed the same way into
q [seqs * m, h, d], with weights [seqs * m, h] (fp32, as the indexer's weight projection
gives them) and each query's causal window [ks, ke) of key rows (int32): its sequence's
first row up to and including its own position.  logits [seqs * m, seqs * ctx] fp32 =
sum_h weights[q, h] * relu(q[q, h] . kv[k]) inside the window, -inf outside."""

from __future__ import annotations

import torch

CHUNK = 128  # query tokens per reference step: [128, h, ctx] scores at a time


def make_inputs(
    seqs: int,
    ctx: int,
    m: int,
    h: int,
    d: int,
    *,
    dtype: torch.dtype,
    device: str,
    seed: int | None = None,
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor]:
    """randn q and kv, randn weights scaled by (h * d)^-1/2 (the indexer's softmax scale
    times its head scale), and the causal windows.  Drawn on the target device."""
    if m > ctx:
        raise ValueError("m query tokens must fit in ctx positions")
    gen = torch.Generator(device=device)
    gen.manual_seed(seed if seed is not None else int(torch.randint(0, 2**31 - 1, (1,))))
    q = torch.randn(seqs * m, h, d, generator=gen, device=device, dtype=dtype)
    kv = torch.randn(seqs * ctx, d, generator=gen, device=device, dtype=dtype)
    w = torch.randn(seqs * m, h, generator=gen, device=device, dtype=torch.float32)
    w *= (h * d) ** -0.5
    start = torch.arange(seqs, device=device).repeat_interleave(m) * ctx
    pos = torch.arange(ctx - m, ctx, device=device).repeat(seqs)  # each query's position
    ks = start.to(torch.int32)
    ke = (start + pos + 1).to(torch.int32)
    return q, kv, w, ks, ke


def _logits(
    q: torch.Tensor,
    kv: torch.Tensor,
    w: torch.Tensor,
    ks: torch.Tensor,
    ke: torch.Tensor,
    acc: torch.dtype,
) -> torch.Tensor:
    nq = q.shape[0]
    k = kv.shape[0]
    out = torch.full((nq, k), float("-inf"), device=q.device, dtype=torch.float32)
    cols = torch.arange(k, device=q.device)
    keys = kv.to(acc)
    for lo in range(0, nq, CHUNK):
        hi = min(nq, lo + CHUNK)
        # only the key rows some query of this chunk sees
        first, last = int(ks[lo:hi].min()), int(ke[lo:hi].max())
        s = torch.einsum("qhd,kd->qhk", q[lo:hi].to(acc), keys[first:last]).relu()
        s = torch.einsum("qhk,qh->qk", s, w[lo:hi].to(acc)).float()
        c = cols[first:last][None, :]
        inside = (c >= ks[lo:hi, None]) & (c < ke[lo:hi, None])
        out[lo:hi, first:last] = torch.where(inside, s, float("-inf"))
    return out


def reference(
    q: torch.Tensor, kv: torch.Tensor, w: torch.Tensor, ks: torch.Tensor, ke: torch.Tensor
) -> torch.Tensor:
    return _logits(q, kv, w, ks, ke, torch.float32)


def torch_dsa_indexer(
    q: torch.Tensor, kv: torch.Tensor, w: torch.Tensor, ks: torch.Tensor, ke: torch.Tensor
) -> torch.Tensor:
    """The dense formulation in plain torch, 128 query tokens at a time: each chunk's
    [128, h, keys] scores by einsum in the input dtype, relu, weighted sum over the heads,
    masked to the windows."""
    return _logits(q, kv, w, ks, ke, q.dtype)
