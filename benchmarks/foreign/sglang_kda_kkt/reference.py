"""Kimi Delta Attention's intra-chunk matrices (SGLang's `chunk_kda_scaled_dot_kkt_fwd` on
packed sequences, after the chunk-local gate cumsum, fp32 out): inputs, fp32 reference,
torch baseline.

q and k are [1, tokens, heads, dk] (l2-normalized, as `chunk_kda` does with
use_qk_l2norm_in_kernel), g is [1, tokens, heads, dk] in fp32: the chunk-local cumsum of
the per-channel log decays (KDA's gate gives every key channel its own decay, where the
gated delta rule has one per head), beta [1, tokens, heads] fp32.  Two outputs, each
[1, tokens, heads, chunk] in fp32: for token t at position i of its chunk and the chunk's
j-th token s_j,

    A[t, h, j]   = beta[t, h] * sum_c k[t, h, c] k[s_j, h, c] exp(g[t, h, c] - g[s_j, h, c])   (j < i)
    Aqk[t, h, j] = scale * sum_c q[t, h, c] k[s_j, h, c] exp(g[t, h, c] - g[s_j, h, c])   (j <= i)

and 0 elsewhere (chunk = 64 tokens from its sequence's start)."""

from __future__ import annotations

import itertools

import torch


def make_inputs(
    seqs: int, seqlen: int, heads: int, dk: int, chunk: int, *,
    dtype: torch.dtype, device: str, seed: int | None = None,
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor, int, float]:  # fmt: skip
    """Unit-norm q and k in the spec's dtype; Kimi-like per-channel log decays
    (-exp(A_log) * softplus(f + dt_bias)) cumsummed per chunk and beta = sigmoid(b), both
    fp32; `seqs` sequences of `seqlen` tokens packed (int32 bounds); the chunk length and
    scale = dk ** -0.5 (`chunk_kda`'s default)."""
    gen = torch.Generator(device="cpu")
    gen.manual_seed(seed if seed is not None else int(torch.randint(0, 2**31 - 1, (1,))))
    tokens = seqs * seqlen
    norm = torch.nn.functional.normalize
    q = norm(torch.randn(1, tokens, heads, dk, generator=gen), dim=-1)
    k = norm(torch.randn(1, tokens, heads, dk, generator=gen), dim=-1)
    a_log = torch.rand(heads, 1, generator=gen) * 1.5 - 1.0
    f = torch.randn(1, tokens, heads, dk, generator=gen)
    g = -torch.exp(a_log) * torch.nn.functional.softplus(f - 2.0)
    beta = torch.sigmoid(torch.randn(1, tokens, heads, generator=gen))
    cu = torch.arange(0, tokens + 1, seqlen, dtype=torch.int32)
    g = chunk_cumsum(g, cu, chunk)
    return (
        q.to(dtype=dtype, device=device), k.to(dtype=dtype, device=device), g.to(device),
        beta.to(device), cu.to(device), chunk, dk**-0.5,
    )  # fmt: skip


def chunk_cumsum(g: torch.Tensor, cu_seqlens: torch.Tensor, chunk: int) -> torch.Tensor:
    """The chunk-local running sums of g over tokens within each packed sequence (fp32)."""
    out = torch.empty_like(g, dtype=torch.float32)
    for start, end in itertools.pairwise(cu_seqlens.tolist()):
        for c in range(start, end, chunk):
            stop = min(c + chunk, end)
            out[:, c:stop] = g[:, c:stop].float().cumsum(dim=1)
    return out


def reference(
    q: torch.Tensor, k: torch.Tensor, g: torch.Tensor, beta: torch.Tensor,
    cu_seqlens: torch.Tensor, chunk: int, scale: float,
) -> tuple[torch.Tensor, torch.Tensor]:  # fmt: skip
    """Chunk by chunk in fp32, the per-channel decay of every (row, column) pair formed
    explicitly."""
    _, tokens, heads, _ = k.shape
    a = torch.zeros(1, tokens, heads, chunk, dtype=torch.float32, device=k.device)
    aqk = torch.zeros_like(a)
    for start, end in itertools.pairwise(cu_seqlens.tolist()):
        for c in range(start, end, chunk):
            n = min(c + chunk, end) - c
            qc, kc = q[0, c : c + n].float(), k[0, c : c + n].float()  # [n, H, K]
            gc = g[0, c : c + n].float()
            decay = torch.exp((gc[:, None] - gc[None, :]).clamp_max(0.0))  # [n, n, H, K]
            kk = torch.einsum("ihc,jhc,ijhc->hij", kc, kc, decay)
            qk = torch.einsum("ihc,jhc,ijhc->hij", qc, kc, decay)
            kk = torch.tril(kk, diagonal=-1) * beta[0, c : c + n].float().t()[:, :, None]
            qk = torch.tril(qk) * scale
            a[0, c : c + n, :, :n] = kk.permute(1, 0, 2)
            aqk[0, c : c + n, :, :n] = qk.permute(1, 0, 2)
    return a, aqk


def torch_kda_kkt(
    q: torch.Tensor, k: torch.Tensor, g: torch.Tensor, beta: torch.Tensor,
    cu_seqlens: torch.Tensor, chunk: int, scale: float,
) -> tuple[torch.Tensor, torch.Tensor]:  # fmt: skip
    """The same by torch on the padded [chunks, chunk] view (equal sequence lengths), one
    head at a time: the [chunks, chunk, chunk, dk] decays formed, products in fp32."""
    _, tokens, heads, _ = k.shape
    seqs = cu_seqlens.numel() - 1
    seqlen = tokens // seqs
    nc = -(-seqlen // chunk)
    pad = nc * chunk - seqlen

    def view(x: torch.Tensor) -> torch.Tensor:  # [1, tokens, H, ...] -> [H, chunks, chunk, ...]
        x = x.float().view(seqs, seqlen, *x.shape[2:])
        x = torch.nn.functional.pad(x, (0, 0) * (x.dim() - 2) + (0, pad))
        return x.reshape(seqs * nc, chunk, *x.shape[2:]).transpose(0, 2).transpose(1, 2)

    qv, kv, gv, bv = view(q), view(k), view(g), view(beta)
    causal = torch.ones(chunk, chunk, dtype=torch.bool, device=k.device).tril()
    a = torch.empty(heads, seqs * nc, chunk, chunk, dtype=torch.float32, device=k.device)
    aqk = torch.empty_like(a)
    for h in range(heads):
        decay = torch.exp((gv[h][:, :, None] - gv[h][:, None, :]).clamp_max(0.0))
        kd = kv[h][:, None] * decay  # [chunks, i, j, K]: k_j exp(g_i - g_j)
        a[h] = (kv[h][:, :, None] * kd).sum(-1) * bv[h][:, :, None]
        aqk[h] = (qv[h][:, :, None] * kd).sum(-1) * scale
    a = a * causal.tril(-1)
    aqk = aqk * causal

    def back(x: torch.Tensor) -> torch.Tensor:  # [H, chunks, chunk, chunk] -> [1, tokens, H, chunk]
        x = x.permute(1, 2, 0, 3).reshape(seqs, nc * chunk, heads, chunk)[:, :seqlen]
        return x.reshape(1, tokens, heads, chunk).contiguous()

    return back(a), back(aqk)
