"""The chunk-local cumulative sum of a gated delta rule's log decays (SGLang's
`chunk_local_cumsum` on a [1, tokens, heads] g with cu_seqlens): inputs, fp32 reference,
torch baseline.  Within each packed sequence, token i of chunk c (chunk = 64 tokens from the
sequence's start) gets the sum of g over the chunk's tokens up to and including i, per head,
in fp32."""

from __future__ import annotations

import itertools

import torch


def make_inputs(
    seqs: int, seqlen: int, heads: int, chunk: int, *, dtype: torch.dtype, device: str,
    seed: int | None = None,
) -> tuple[torch.Tensor, torch.Tensor, int]:  # fmt: skip
    """Log decays as Qwen3-Next's gating makes them (-exp(A_log) * softplus(a + dt_bias),
    small negative numbers), fp32 whatever the spec's dtype (SGLang's gating kernel writes
    g in fp32); `seqs` sequences of `seqlen` tokens packed; the chunk length."""
    gen = torch.Generator(device="cpu")
    gen.manual_seed(seed if seed is not None else int(torch.randint(0, 2**31 - 1, (1,))))
    tokens = seqs * seqlen
    a = torch.randn(1, tokens, heads, generator=gen)
    decay = torch.rand(heads, generator=gen) * 4 + 1
    g = -decay * torch.nn.functional.softplus(a - 4.0)
    cu = torch.arange(0, tokens + 1, seqlen, dtype=torch.int32)
    return g.to(device), cu.to(device), chunk


def _chunk_cumsum(g: torch.Tensor, cu_seqlens: torch.Tensor, chunk: int) -> torch.Tensor:
    out = torch.empty_like(g, dtype=torch.float32)
    bounds = cu_seqlens.tolist()
    for start, end in itertools.pairwise(bounds):
        for c in range(start, end, chunk):
            stop = min(c + chunk, end)
            out[:, c:stop] = g[:, c:stop].float().cumsum(dim=1)
    return out


def reference(g: torch.Tensor, cu_seqlens: torch.Tensor, chunk: int) -> torch.Tensor:
    return _chunk_cumsum(g, cu_seqlens, chunk)


def torch_chunk_cumsum(g: torch.Tensor, cu_seqlens: torch.Tensor, chunk: int) -> torch.Tensor:
    """The same sums by torch's cumsum on the padded [chunks, chunk, heads] view (equal
    sequence lengths: one reshape, no host loop)."""
    _, tokens, heads = g.shape
    seqs = cu_seqlens.numel() - 1
    seqlen = tokens // seqs
    nc = -(-seqlen // chunk)
    x = g.float().view(seqs, seqlen, heads)
    x = torch.nn.functional.pad(x, (0, 0, 0, nc * chunk - seqlen))
    y = x.view(seqs, nc, chunk, heads).cumsum(dim=2).view(seqs, nc * chunk, heads)
    return y[:, :seqlen].reshape(1, tokens, heads)
