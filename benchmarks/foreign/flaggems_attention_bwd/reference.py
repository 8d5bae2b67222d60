"""FlagGems' causal scaled-dot-product attention backward
(`scaled_dot_product_attention_backward`, its `_attn_bwd_preprocess` and `_attn_bwd`):
inputs, reference, torch baseline.

q and do are [batch, heads, seq, head_dim], k and v [batch, kv_heads, seq, head_dim], all
in the spec's dtype, contiguous (the layout FlagGems asserts); o and M are what FlagGems'
forward saves for the backward: the causal attention output in the dtype and, in fp32,
each query row's log-sum-exp of the scaled scores in base 2 (lse * log2(e)).  The scale is
1 / sqrt(head_dim).  The outputs are dq (as q) and dk, dv (as k and v: each KV head's
gradient summed over its query heads), in the dtype."""

from __future__ import annotations

import math

import torch


def _forward(
    q: torch.Tensor, k: torch.Tensor, v: torch.Tensor
) -> tuple[torch.Tensor, torch.Tensor]:
    """o (fp32) and the base-2 log-sum-exp of the causal attention, one head at a time."""
    batch, heads, seq, dim = q.shape
    group = heads // k.shape[1]
    scale = 1.0 / math.sqrt(dim)
    o = torch.empty(q.shape, dtype=torch.float32, device=q.device)
    lse = torch.empty(batch, heads, seq, dtype=torch.float32, device=q.device)
    causal = torch.ones(seq, seq, dtype=torch.bool, device=q.device).tril()
    for b in range(batch):
        for h in range(heads):
            s = (q[b, h].float() @ k[b, h // group].float().T) * scale
            s = s.masked_fill(~causal, float("-inf"))
            lse[b, h] = torch.logsumexp(s, dim=-1)
            o[b, h] = torch.softmax(s, dim=-1) @ v[b, h // group].float()
    return o, lse


def make_inputs(
    batch: int,
    heads: int,
    kv_heads: int,
    seq: int,
    head_dim: int,
    *,
    dtype: torch.dtype,
    device: str,
    seed: int | None = None,
) -> tuple[torch.Tensor, ...]:
    """(q, k, v, o, do, M): normal q, k, v and do (do scaled by 0.1), o and M from an fp32
    forward on the device."""
    gen = torch.Generator(device="cpu")
    gen.manual_seed(seed if seed is not None else int(torch.randint(0, 2**31 - 1, (1,))))
    q = torch.randn(batch, heads, seq, head_dim, generator=gen)
    k = torch.randn(batch, kv_heads, seq, head_dim, generator=gen)
    v = torch.randn(batch, kv_heads, seq, head_dim, generator=gen)
    do = torch.randn(batch, heads, seq, head_dim, generator=gen) * 0.1
    q, k, v, do = (x.to(dtype=dtype, device=device) for x in (q, k, v, do))
    o, lse = _forward(q, k, v)
    return q, k, v, o.to(dtype), do, lse * (1.0 / math.log(2.0))


def reference(
    q: torch.Tensor,
    k: torch.Tensor,
    v: torch.Tensor,
    o: torch.Tensor,
    do: torch.Tensor,
    m: torch.Tensor,
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """FlashAttention's backward written out in fp32 per head from q, k, v and do alone (o
    and M are not read): P = softmax(causal(q k^T * scale)), dV = P^T dO, dP = dO V^T,
    dS = P * (dP - rowsum(dP * P)), dQ = dS K * scale, dK = dS^T Q * scale; dK and dV summed
    over each KV head's query heads; then the dtype."""
    batch, heads, seq, dim = q.shape
    kv_heads = k.shape[1]
    group = heads // kv_heads
    scale = 1.0 / math.sqrt(dim)
    causal = torch.ones(seq, seq, dtype=torch.bool, device=q.device).tril()
    dq = torch.empty(q.shape, dtype=torch.float32, device=q.device)
    dk = torch.zeros(k.shape, dtype=torch.float32, device=q.device)
    dv = torch.zeros(v.shape, dtype=torch.float32, device=q.device)
    for b in range(batch):
        for h in range(heads):
            qh, kh, vh = q[b, h].float(), k[b, h // group].float(), v[b, h // group].float()
            doh = do[b, h].float()
            p = torch.softmax(((qh @ kh.T) * scale).masked_fill(~causal, float("-inf")), dim=-1)
            dp = doh @ vh.T
            ds = p * (dp - (dp * p).sum(dim=-1, keepdim=True))
            dq[b, h] = (ds @ kh) * scale
            dk[b, h // group] += (ds.T @ qh) * scale
            dv[b, h // group] += p.T @ doh
    return dq.to(q.dtype), dk.to(k.dtype), dv.to(v.dtype)


def torch_sdpa_backward(
    q: torch.Tensor,
    k: torch.Tensor,
    v: torch.Tensor,
    o: torch.Tensor,
    do: torch.Tensor,
    m: torch.Tensor,
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """torch's fused causal SDPA with GQA, its forward recomputed and autograd's backward
    (torch keeps its own saved tensors, so the forward is part of this baseline)."""
    qq, kk, vv = (x.detach().requires_grad_() for x in (q, k, v))
    out = torch.nn.functional.scaled_dot_product_attention(
        qq, kk, vv, is_causal=True, enable_gqa=q.shape[1] != k.shape[1]
    )
    dq, dk, dv = torch.autograd.grad(out, (qq, kk, vv), do)
    return dq, dk, dv
