"""Non-causal attention over packed sequences (vLLM's `context_attention_fwd` as a vision
encoder's TRITON_ATTN backend calls it): inputs, fp32 reference, torch baseline.  q, k and v
are [tokens, heads, head_dim], the batch's images (or windows) packed one after the other,
here all of s patches; every patch attends to every patch of its own sequence; the output
has q's shape and dtype."""

from __future__ import annotations

import torch
import torch.nn.functional as F


def make_inputs(
    b: int, s: int, h: int, d: int, *, dtype: torch.dtype, device: str,
    seed: int | None = None,
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor, int]:  # fmt: skip
    """q, k, v (unit normal) for b sequences of s patches and h heads of d, their int32
    start offsets and lengths (cu_seqlens' differences), and the longest length."""
    gen = torch.Generator(device="cpu")
    gen.manual_seed(seed if seed is not None else int(torch.randint(0, 2**31 - 1, (1,))))
    q = torch.randn(b * s, h, d, generator=gen)
    k = torch.randn(b * s, h, d, generator=gen)
    v = torch.randn(b * s, h, d, generator=gen)
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


def _attention(
    q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, start_loc: torch.Tensor,
    seq_len: torch.Tensor, acc: torch.dtype,
) -> torch.Tensor:  # fmt: skip
    out = torch.empty_like(q)
    group = q.shape[1] // k.shape[1]
    for start, n in zip(start_loc.tolist(), seq_len.tolist(), strict=True):
        rows = slice(start, start + n)
        qs = q[rows].transpose(0, 1).to(acc)  # [h, n, d]
        ks = k[rows].transpose(0, 1).to(acc).repeat_interleave(group, dim=0)
        vs = v[rows].transpose(0, 1).to(acc).repeat_interleave(group, dim=0)
        o = F.scaled_dot_product_attention(qs, ks, vs, is_causal=False)
        out[rows] = o.transpose(0, 1).to(q.dtype)
    return out


def reference(
    q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, start_loc: torch.Tensor,
    seq_len: torch.Tensor, max_len: int,
) -> torch.Tensor:  # fmt: skip
    return _attention(q, k, v, start_loc, seq_len, torch.float32)


def torch_vit_prefill_attention(
    q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, start_loc: torch.Tensor,
    seq_len: torch.Tensor, max_len: int,
) -> torch.Tensor:  # fmt: skip
    """torch's fused scaled_dot_product_attention per sequence, non-causal, in the input
    dtype (vLLM's TORCH_SDPA encoder backend likewise loops over the cu_seqlens)."""
    return _attention(q, k, v, start_loc, seq_len, q.dtype)
