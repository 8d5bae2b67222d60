"""The inverse of I + A per 64-token chunk (SGLang's `solve_tril` on the gated delta rule's
scaled K K^T, packed sequences): inputs, fp64 reference, torch baseline.

A is [1, tokens, heads, 64] in fp32, strictly lower triangular within each chunk (row i of
a chunk holds columns j < i; chunk = 64 tokens from the sequence's start, the last one cut):
the output `chunk_scaled_dot_kkt_fwd` writes (this set's `sglang_gdn_kkt`).  The output is
(I + A_c)^-1 for every chunk c and head, laid out like A, in the spec's dtype (SGLang asks
for k's dtype); columns past a cut chunk's end are 0."""

from __future__ import annotations

import itertools

import torch


def make_inputs(
    seqs: int, seqlen: int, heads: int, chunk: int, *, dtype: torch.dtype, device: str,
    seed: int | None = None,
) -> tuple[torch.Tensor, torch.Tensor, torch.dtype]:  # fmt: skip
    """A as the gated delta rule's chunked prefill makes it: beta * K K^T * exp(g_i - g_j),
    strictly lower triangular per chunk, from unit-norm 128-wide keys (one per head here,
    sharing a direction per head so that a chunk's keys are alike, as neighbouring tokens'
    are: A's entries reach about 0.6), beta = sigmoid(b) and Qwen3-Next-like log decays; fp32 whatever the spec's dtype (it is
    the output's); `seqs` sequences of `seqlen` tokens packed (int32 bounds); the output's
    dtype, the spec's."""
    gen = torch.Generator(device="cpu")
    gen.manual_seed(seed if seed is not None else int(torch.randint(0, 2**31 - 1, (1,))))
    tokens = seqs * seqlen
    shared = torch.randn(1, heads, 128, generator=gen)  # neighbouring keys are alike
    k = torch.randn(tokens, heads, 128, generator=gen) + shared
    k = torch.nn.functional.normalize(k, dim=-1)
    beta = torch.sigmoid(torch.randn(tokens, heads, generator=gen))
    decay = torch.rand(heads, generator=gen) * 4 + 1
    g = -decay * torch.nn.functional.softplus(torch.randn(tokens, heads, generator=gen) - 4.0)
    cu = torch.arange(0, tokens + 1, seqlen, dtype=torch.int32)
    a = torch.zeros(1, tokens, heads, chunk)
    for c, n in _chunks(cu, chunk):
        kc = k[c : c + n]
        gc = g[c : c + n].cumsum(0).t()  # [H, n]
        prod = torch.einsum("ihd,jhd->hij", kc, kc) * torch.exp(gc[:, :, None] - gc[:, None, :])
        prod = torch.tril(prod * beta[c : c + n].t()[:, :, None], diagonal=-1)
        a[0, c : c + n, :, :n] = prod.permute(1, 0, 2)
    return a.to(device), cu.to(device), dtype


def _chunks(cu_seqlens: torch.Tensor, chunk: int) -> list[tuple[int, int]]:
    """(first token, tokens) of every chunk of every packed sequence."""
    out = []
    for start, end in itertools.pairwise(cu_seqlens.tolist()):
        out += [(c, min(c + chunk, end) - c) for c in range(start, end, chunk)]
    return out


def reference(a: torch.Tensor, cu_seqlens: torch.Tensor, out_dtype: torch.dtype) -> torch.Tensor:
    """Each chunk's (I + A)^-1 by a triangular solve in fp64, returned in fp32."""
    _, tokens, heads, chunk = a.shape
    out = torch.zeros(1, tokens, heads, chunk, dtype=torch.float32, device=a.device)
    for c, n in _chunks(cu_seqlens, chunk):
        m = a[0, c : c + n, :, :n].double().permute(1, 0, 2)  # [H, n, n]
        eye = torch.eye(n, dtype=torch.float64, device=a.device).expand_as(m)
        inv = torch.linalg.solve_triangular(torch.tril(m, -1) + eye, eye, upper=False)
        out[0, c : c + n, :, :n] = inv.permute(1, 0, 2).float()
    return out


def torch_solve_tril(
    a: torch.Tensor, cu_seqlens: torch.Tensor, out_dtype: torch.dtype
) -> torch.Tensor:
    """The same inverses by torch's batched triangular solve in fp32 on the padded [chunks,
    64, 64] view (equal sequence lengths: one call, no host loop; the padding is identity)."""
    _, tokens, heads, chunk = a.shape
    seqs = cu_seqlens.numel() - 1
    seqlen = tokens // seqs
    nc = -(-seqlen // chunk)
    pad = nc * chunk - seqlen
    ap = torch.nn.functional.pad(a.view(seqs, seqlen, heads, chunk), (0, 0, 0, 0, 0, pad))
    ap = ap.view(seqs * nc, chunk, heads, chunk).transpose(1, 2)  # [chunks, H, BT, BT]
    eye = torch.eye(chunk, dtype=a.dtype, device=a.device).expand_as(ap)
    inv = torch.linalg.solve_triangular(torch.tril(ap, -1) + eye, eye, upper=False)
    inv = inv.transpose(1, 2).reshape(seqs, nc * chunk, heads, chunk)[:, :seqlen]
    return inv.reshape(1, tokens, heads, chunk).to(out_dtype)
