"""Causal prefill attention over packed sequences with grouped KV heads (SGLang's
`context_attention_fwd`): inputs, fp32 reference, torch baseline.  q is [tokens, q heads,
head_dim], k and v [tokens, kv heads, head_dim], the batch's sequences packed one after the
other (here all of length s); the output has q's shape and dtype."""

from __future__ import annotations

import torch
import torch.nn.functional as F


def make_inputs(
    b: int, s: int, hq: int, hk: int, d: int, *, dtype: torch.dtype, device: str,
    seed: int | None = None,
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor, int]:  # fmt: skip
    """q, k, v (unit normal) for b sequences of s tokens, their int32 start offsets and
    lengths, and the longest length."""
    gen = torch.Generator(device="cpu")
    gen.manual_seed(seed if seed is not None else int(torch.randint(0, 2**31 - 1, (1,))))
    q = torch.randn(b * s, hq, d, generator=gen)
    k = torch.randn(b * s, hk, d, generator=gen)
    v = torch.randn(b * s, hk, d, generator=gen)
    seq_len = torch.full((b,), s, dtype=torch.int32)
    start_loc = torch.arange(b, dtype=torch.int32) * s
    return (
        q.to(dtype=dtype, device=device),
        k.to(dtype=dtype, device=device),
        v.to(dtype=dtype, device=device),
        start_loc.to(device),
        seq_len.to(device),
        s,
    )


def packed_attention(
    q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, start_loc: torch.Tensor,
    seq_len: torch.Tensor, acc: torch.dtype, causal: bool = True,
) -> torch.Tensor:  # fmt: skip
    """torch's scaled_dot_product_attention sequence by sequence in the ``acc`` dtype, the
    KV heads repeated for the query heads that share them (vLLM's vision-encoder wrap calls
    it non-causal)."""
    out = torch.empty_like(q)
    group = q.shape[1] // k.shape[1]
    for start, n in zip(start_loc.tolist(), seq_len.tolist(), strict=True):
        rows = slice(start, start + n)
        qs = q[rows].transpose(0, 1).to(acc)  # [hq, n, d]
        ks = k[rows].transpose(0, 1).to(acc).repeat_interleave(group, dim=0)
        vs = v[rows].transpose(0, 1).to(acc).repeat_interleave(group, dim=0)
        o = F.scaled_dot_product_attention(qs, ks, vs, is_causal=causal)
        out[rows] = o.transpose(0, 1).to(q.dtype)
    return out


def reference(
    q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, start_loc: torch.Tensor,
    seq_len: torch.Tensor, max_len: int,
) -> torch.Tensor:  # fmt: skip
    return packed_attention(q, k, v, start_loc, seq_len, torch.float32)


def torch_prefill_attention(
    q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, start_loc: torch.Tensor,
    seq_len: torch.Tensor, max_len: int,
) -> torch.Tensor:  # fmt: skip
    """torch's fused scaled_dot_product_attention per sequence, causal, in the input dtype
    (KV heads repeated for the query heads that share them)."""
    return packed_attention(q, k, v, start_loc, seq_len, q.dtype)
