"""The chunk-local cumulative sum of Kimi Delta Attention's per-channel log decays (SGLang's
`chunk_local_cumsum` on a [1, tokens, heads, head_dim] g with cu_seqlens, which dispatches
to the vector kernel): inputs, fp32 reference, torch baseline.  Within each packed
sequence, token i of chunk c (chunk = 64 tokens from the sequence's start) gets the sum of g
over the chunk's tokens up to and including i, per head and channel, in fp32."""

from __future__ import annotations

import itertools

import torch


def make_inputs(
    seqs: int, seqlen: int, heads: int, head_dim: int, chunk: int, *, dtype: torch.dtype,
    device: str, seed: int | None = None,
) -> tuple[torch.Tensor, torch.Tensor, int]:  # fmt: skip
    """Log decays as Kimi Linear's KDA gate makes them (-exp(A_log) * softplus(gate
    projection + bias), A_log = log(1..16) per head), fp32 whatever the spec's dtype (SGLang's
    gate kernel writes g in fp32), drawn on the device; `seqs` sequences of `seqlen` tokens
    packed (int32 bounds); the chunk length."""
    gen = torch.Generator(device=device)
    gen.manual_seed(seed if seed is not None else int(torch.randint(0, 2**31 - 1, (1,))))
    tokens = seqs * seqlen
    x = torch.randn(1, tokens, heads, head_dim, generator=gen, device=device)
    bias = 0.5 * torch.randn(heads, head_dim, generator=gen, device=device)
    a_log = torch.log(1.0 + 15.0 * torch.rand(heads, generator=gen, device=device))
    g = -torch.exp(a_log)[:, None] * torch.nn.functional.softplus(x - 2.0 + bias)
    cu = torch.arange(0, tokens + 1, seqlen, dtype=torch.int32, device=device)
    return g.contiguous(), cu, chunk


def reference(g: torch.Tensor, cu_seqlens: torch.Tensor, chunk: int) -> torch.Tensor:
    """Chunk by chunk of each sequence, torch's cumsum in fp32."""
    out = torch.empty_like(g, dtype=torch.float32)
    for start, end in itertools.pairwise(cu_seqlens.tolist()):
        for c in range(start, end, chunk):
            stop = min(c + chunk, end)
            out[:, c:stop] = g[:, c:stop].float().cumsum(dim=1)
    return out


def torch_kda_cumsum(g: torch.Tensor, cu_seqlens: torch.Tensor, chunk: int) -> torch.Tensor:
    """The same sums by torch's cumsum on the padded [chunks, chunk, heads, head_dim] view
    (equal sequence lengths: one pad and reshape, no host loop)."""
    _, tokens, heads, dim = g.shape
    seqs = cu_seqlens.numel() - 1
    seqlen = tokens // seqs
    nc = -(-seqlen // chunk)
    x = g.float().view(seqs, seqlen, heads, dim)
    x = torch.nn.functional.pad(x, (0, 0, 0, 0, 0, nc * chunk - seqlen))
    y = x.view(seqs, nc, chunk, heads, dim).cumsum(dim=2).view(seqs, nc * chunk, heads, dim)
    return y[:, :seqlen].reshape(1, tokens, heads, dim)
