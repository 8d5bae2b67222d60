"""The gated delta rule's per-chunk scaled K K^T (SGLang's `chunk_scaled_dot_kkt_fwd` on
packed sequences, with the chunk-local gate cumsum, fp32 out): inputs, fp32 reference,
torch baseline.

k is [1, tokens, kheads, dk] (the l2-normalized keys, one key head shared by heads //
kheads value heads), beta and g are [1, tokens, heads] in fp32 (SGLang's gating writes both
in fp32; g is already the chunk-local cumsum of the log decays).  The output A is [1,
tokens, heads, chunk] in fp32: for token t at position i of its chunk (chunk = 64 tokens
from its sequence's start) and column j < i of the same chunk, A[t, h, j] = beta[t, h] *
(k[t] . k[s_j]) * exp(g[t, h] - g[s_j, h]), s_j the chunk's j-th token and k the key head
of h; every other column is 0."""

from __future__ import annotations

import itertools

import torch


def make_inputs(
    seqs: int, seqlen: int, heads: int, kheads: int, dk: int, chunk: int, *,
    dtype: torch.dtype, device: str, seed: int | None = None,
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor, int]:  # fmt: skip
    """Unit-norm keys in the spec's dtype (SGLang l2-normalizes them first); beta =
    sigmoid(b) and the chunk-local cumsum of Qwen3-Next-like log decays, both fp32; `seqs`
    sequences of `seqlen` tokens packed (int32 bounds); the chunk length."""
    if heads % kheads:
        raise ValueError("heads must be a multiple of kheads")
    gen = torch.Generator(device="cpu")
    gen.manual_seed(seed if seed is not None else int(torch.randint(0, 2**31 - 1, (1,))))
    tokens = seqs * seqlen
    k = torch.nn.functional.normalize(torch.randn(1, tokens, kheads, dk, generator=gen), dim=-1)
    beta = torch.sigmoid(torch.randn(1, tokens, heads, generator=gen))
    a = torch.randn(1, tokens, heads, generator=gen)
    decay = torch.rand(heads, generator=gen) * 4 + 1
    g = -decay * torch.nn.functional.softplus(a - 4.0)
    cu = torch.arange(0, tokens + 1, seqlen, dtype=torch.int32)
    g = chunk_cumsum(g, cu, chunk)
    return k.to(dtype=dtype, device=device), beta.to(device), g.to(device), cu.to(device), chunk


def chunk_cumsum(g: torch.Tensor, cu_seqlens: torch.Tensor, chunk: int) -> torch.Tensor:
    """The chunk-local running sums of g within each packed sequence (fp32)."""
    out = torch.empty_like(g, dtype=torch.float32)
    for start, end in itertools.pairwise(cu_seqlens.tolist()):
        for c in range(start, end, chunk):
            stop = min(c + chunk, end)
            out[:, c:stop] = g[:, c:stop].float().cumsum(dim=1)
    return out


def _kkt(
    k: torch.Tensor, beta: torch.Tensor, g: torch.Tensor, cu_seqlens: torch.Tensor, chunk: int,
    acc: torch.dtype,
) -> torch.Tensor:  # fmt: skip
    _, tokens, kheads, _ = k.shape
    heads = beta.shape[-1]
    out = torch.zeros(1, tokens, heads, chunk, dtype=torch.float32, device=k.device)
    for start, end in itertools.pairwise(cu_seqlens.tolist()):
        for c in range(start, end, chunk):
            n = min(c + chunk, end) - c
            kc = k[0, c : c + n].to(acc).repeat_interleave(heads // kheads, dim=1)  # [n, H, K]
            prod = torch.einsum("ihd,jhd->hij", kc, kc).float()
            gc = g[0, c : c + n].float()  # [n, H]
            diff = (gc.t()[:, :, None] - gc.t()[:, None, :]).clamp_max(0.0)
            a = prod * torch.exp(diff) * beta[0, c : c + n].float().t()[:, :, None]
            a = torch.tril(a, diagonal=-1)  # [H, n, n]
            out[0, c : c + n, :, :n] = a.permute(1, 0, 2)
    return out


def reference(
    k: torch.Tensor, beta: torch.Tensor, g: torch.Tensor, cu_seqlens: torch.Tensor, chunk: int
) -> torch.Tensor:
    return _kkt(k, beta, g, cu_seqlens, chunk, torch.float32)


def torch_kkt(
    k: torch.Tensor, beta: torch.Tensor, g: torch.Tensor, cu_seqlens: torch.Tensor, chunk: int
) -> torch.Tensor:
    """The same matrices by torch on the padded [chunks, chunk] view (equal sequence
    lengths: one batched matmul in the input dtype, no host loop)."""
    _, tokens, kheads, dk = k.shape
    heads = beta.shape[-1]
    seqs = cu_seqlens.numel() - 1
    seqlen = tokens // seqs
    nc = -(-seqlen // chunk)
    pad = nc * chunk - seqlen
    kp = torch.nn.functional.pad(k.view(seqs, seqlen, kheads, dk), (0, 0, 0, 0, 0, pad))
    kp = kp.view(seqs * nc, chunk, kheads, dk).transpose(1, 2)  # [chunks, Hg, BT, K]
    prod = (kp @ kp.transpose(-1, -2)).float().repeat_interleave(heads // kheads, dim=1)
    gp = torch.nn.functional.pad(g.float().view(seqs, seqlen, heads), (0, 0, 0, pad))
    gp = gp.view(seqs * nc, chunk, heads).transpose(1, 2)  # [chunks, H, BT]
    bp = torch.nn.functional.pad(beta.float().view(seqs, seqlen, heads), (0, 0, 0, pad))
    bp = bp.view(seqs * nc, chunk, heads).transpose(1, 2)
    decay = torch.exp((gp[..., :, None] - gp[..., None, :]).clamp_max(0.0))
    a = torch.tril(prod * decay * bp[..., :, None], diagonal=-1)  # [chunks, H, BT, BT]
    a = a.permute(0, 2, 1, 3).reshape(seqs, nc * chunk, heads, chunk)[:, :seqlen]
    return a.reshape(1, tokens, heads, chunk)
