"""Non-causal attention over packed sequences (vLLM's `context_attention_fwd` as a vision
encoder's TRITON_ATTN backend calls it): inputs, fp32 reference, torch baseline.  q, k and v
are [tokens, heads, head_dim], the batch's images (or windows) packed one after the other,
here all of s patches; every patch attends to every patch of its own sequence; the output
has q's shape and dtype.  The packing and the per-sequence attention are SGLang's prefill
wrap's (vLLM's kernel is a copy of SGLang's), here with as many KV heads as query heads and
no causal mask."""

from __future__ import annotations

import torch

from foreign.sglang_prefill_attention.reference import make_inputs as packed_inputs
from foreign.sglang_prefill_attention.reference import packed_attention


def make_inputs(
    b: int, s: int, h: int, d: int, *, dtype: torch.dtype, device: str,
    seed: int | None = None,
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor, int]:  # fmt: skip
    """q, k, v (unit normal) for b sequences of s patches and h heads of d, their int32
    start offsets and lengths (cu_seqlens' differences), and the longest length."""
    return packed_inputs(b, s, h, h, d, dtype=dtype, device=device, seed=seed)


def reference(
    q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, start_loc: torch.Tensor,
    seq_len: torch.Tensor, max_len: int,
) -> torch.Tensor:  # fmt: skip
    return packed_attention(q, k, v, start_loc, seq_len, torch.float32, causal=False)


def torch_vit_prefill_attention(
    q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, start_loc: torch.Tensor,
    seq_len: torch.Tensor, max_len: int,
) -> torch.Tensor:  # fmt: skip
    """torch's fused scaled_dot_product_attention per sequence, non-causal, in the input
    dtype (vLLM's TORCH_SDPA encoder backend likewise loops over the cu_seqlens)."""
    return packed_attention(q, k, v, start_loc, seq_len, q.dtype, causal=False)
