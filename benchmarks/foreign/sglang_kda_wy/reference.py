"""Kimi Delta Attention's WY recompute (SGLang's `recompute_w_u_fwd` with the per-channel
gate, the fourth kernel of `chunk_kda_fwd`, on packed sequences): inputs, fp32 reference,
torch baseline.

k is [1, tokens, heads, dk] (l2-normalized, as `chunk_kda` does with
use_qk_l2norm_in_kernel; KDA has as many key heads as value heads), v [1, tokens, heads,
dv], beta [1, tokens, heads] fp32 (sigmoid of the b projection), g [1, tokens, heads, dk]
fp32: the chunk-local cumsum of the per-channel log decays (`sglang_kda_cumsum`'s output),
and A [1, tokens, heads, chunk] in k's dtype: per chunk and head, (I + A_kk)^-1 with A_kk
the strict lower beta-scaled, per-channel-decayed K K^T (`sglang_kda_kkt`'s first output),
the matrix `solve_tril` hands on.  For token t at position i of chunk c, with s_j the
chunk's j-th token and e its last token (the sequence's last in a cut chunk),

    w[t, h]  = sum_{j <= i} A[t, h, j] beta[s_j, h] (k[s_j, h] * exp(g[s_j, h]))
    u[t, h]  = sum_{j <= i} A[t, h, j] beta[s_j, h] v[s_j, h]
    kg[t, h] = k[t, h] * exp(g[e, h] - g[t, h])

(element-wise over the dk channels), all three in the inputs' dtype: w and u the WY form
the chunked state recurrence consumes, kg the keys decayed to the chunk's end that
`chunk_gated_delta_rule_fwd_h` takes in KDA's place of k."""

from __future__ import annotations

import itertools
from typing import Any

import torch

from foreign.sglang_kda_kkt.reference import chunk_cumsum


def make_inputs(
    seqs: int, seqlen: int, heads: int, dk: int, dv: int, chunk: int, *,
    dtype: torch.dtype, device: str, seed: int | None = None,
) -> tuple[Any, ...]:  # fmt: skip
    """(k, v, beta, g, A, cu_seqlens, chunk): unit-norm keys and normal values in the spec's
    dtype; beta = sigmoid(b) and Kimi-like per-channel log decays (-exp(A_log) *
    softplus(f - 2)) cumsummed per chunk, both fp32; A = (I + strict lower beta K K^T
    exp(g_i - g_j))^-1 per chunk and head, the decay formed channel by channel from the
    rounded keys in fp32 and the inverse rounded to the dtype as SGLang's solve_tril
    stores it (zero right of the diagonal and past a cut chunk's end); `seqs` sequences of
    `seqlen` tokens packed (int32 bounds).  Drawn on the device (the 8k trial's keys,
    values and gates are 100 M values)."""
    gen = torch.Generator(device=device)
    gen.manual_seed(seed if seed is not None else int(torch.randint(0, 2**31 - 1, (1,))))
    tokens = seqs * seqlen

    def randn(*shape: int) -> torch.Tensor:
        return torch.randn(*shape, generator=gen, device=device)

    k = torch.nn.functional.normalize(randn(1, tokens, heads, dk), dim=-1).to(dtype)
    v = randn(1, tokens, heads, dv).to(dtype)
    beta = torch.sigmoid(randn(1, tokens, heads))
    a_log = torch.rand(heads, 1, generator=gen, device=device) * 1.5 - 1.0
    g = -torch.exp(a_log) * torch.nn.functional.softplus(randn(1, tokens, heads, dk) - 2.0)
    cu = torch.arange(0, tokens + 1, seqlen, dtype=torch.int32)
    g = chunk_cumsum(g, cu, chunk)
    a = torch.zeros(1, tokens, heads, chunk, dtype=torch.float32, device=device)
    for start, end in itertools.pairwise(cu.tolist()):
        for c in range(start, end, chunk):
            n = min(c + chunk, end) - c
            kc, gc = k[0, c : c + n].float(), g[0, c : c + n]  # [n, H, K]
            decay = torch.exp((gc[:, None] - gc[None, :]).clamp_max(0.0))  # [n, n, H, K]
            kk = torch.einsum("ihc,jhc,ijhc->hij", kc, kc, decay)
            strict = torch.tril(kk, diagonal=-1) * beta[0, c : c + n].t()[:, :, None]
            eye = torch.eye(n, device=device).expand_as(strict)
            inv = torch.linalg.solve_triangular(eye + strict, eye, upper=False)  # [H, n, n]
            a[0, c : c + n, :, :n] = inv.permute(1, 0, 2)
    return k, v, beta, g, a.to(dtype), cu.to(device), chunk


def reference(
    k: torch.Tensor, v: torch.Tensor, beta: torch.Tensor, g: torch.Tensor, A: torch.Tensor,
    cu_seqlens: torch.Tensor, chunk: int,
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:  # fmt: skip
    """Chunk by chunk of each sequence, in fp32 from the rounded inputs."""
    w = torch.empty_like(k, dtype=torch.float32)
    u = torch.empty_like(v, dtype=torch.float32)
    kg = torch.empty_like(w)
    for start, end in itertools.pairwise(cu_seqlens.tolist()):
        for c in range(start, end, chunk):
            n = min(c + chunk, end) - c
            a = A[0, c : c + n, :, :n].float().permute(1, 0, 2)  # [H, n, n]
            bt = beta[0, c : c + n].float()[..., None]  # [n, H, 1]
            kc, gc = k[0, c : c + n].float(), g[0, c : c + n].float()  # [n, H, K]
            kb = kc * bt * torch.exp(gc)
            vb = v[0, c : c + n].float() * bt
            w[0, c : c + n] = torch.bmm(a, kb.transpose(0, 1)).transpose(0, 1)
            u[0, c : c + n] = torch.bmm(a, vb.transpose(0, 1)).transpose(0, 1)
            kg[0, c : c + n] = kc * torch.exp(gc[-1:] - gc)
    return w.to(k.dtype), u.to(v.dtype), kg.to(k.dtype)


def torch_kda_wy(
    k: torch.Tensor, v: torch.Tensor, beta: torch.Tensor, g: torch.Tensor, A: torch.Tensor,
    cu_seqlens: torch.Tensor, chunk: int,
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:  # fmt: skip
    """The same by torch on the padded [chunks, chunk] view (equal sequence lengths, no
    host loop): the scaled keys and values rounded to the dtype, two batched matmuls in
    it, and kg from each token's chunk-end gate row gathered by index, the exps in fp32."""
    _, tokens, heads, _ = k.shape
    seqs = cu_seqlens.numel() - 1
    seqlen = tokens // seqs
    nc = -(-seqlen // chunk)
    pad = nc * chunk - seqlen

    def view(x: torch.Tensor) -> torch.Tensor:  # [1, tokens, H, D] -> [chunks, H, chunk, D]
        x = x.view(seqs, seqlen, *x.shape[2:])
        x = torch.nn.functional.pad(x, (0, 0, 0, 0, 0, pad))
        return x.reshape(seqs * nc, chunk, *x.shape[2:]).transpose(1, 2)

    def back(x: torch.Tensor) -> torch.Tensor:  # [chunks, H, chunk, D] -> [1, tokens, H, D]
        x = x.transpose(1, 2).reshape(seqs, nc * chunk, heads, -1)[:, :seqlen]
        return x.reshape(1, tokens, heads, -1)

    kb = (k * (beta[..., None] * torch.exp(g))).to(k.dtype)
    vb = (v * beta[..., None]).to(v.dtype)
    ap = view(A)
    w = back(ap @ view(kb))
    u = back(ap @ view(vb))
    pos = torch.arange(seqlen, device=k.device)
    last = torch.clamp((pos // chunk + 1) * chunk, max=seqlen) - 1  # chunk end per position
    ends = (torch.arange(seqs, device=k.device)[:, None] * seqlen + last).reshape(-1)
    kg = (k * torch.exp(g[:, ends] - g)).to(k.dtype)
    return w, u, kg
