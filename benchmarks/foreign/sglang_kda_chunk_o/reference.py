"""Kimi Delta Attention's chunk output (SGLang's `chunk_gla_fwd_o_gk`, the last kernel of
`chunk_kda_fwd`, on packed sequences): inputs, fp32 reference, torch baseline.

q is [1, tokens, heads, dk] (l2-normalized, as `chunk_kda` does with
use_qk_l2norm_in_kernel), g [1, tokens, heads, dk] fp32: the chunk-local cumsum of the
per-channel log decays; aqk [1, tokens, heads, chunk] fp32: the scaled, decayed Q K^T
within each chunk (`sglang_kda_kkt`'s second output; only its lower triangle is read);
v [1, tokens, heads, dv]: the delta rule's corrected values (v_new); h [chunks, heads, dk,
dv]: the state entering each chunk (`chunk_gated_delta_rule_fwd_h`'s, in k's dtype).  The
output is [1, tokens, heads, dv] in v's dtype: for token t at position i of chunk c,

    o[t, h] = (scale * q[t, h] * exp(g[t, h])) @ h[c, h] + sum_{j <= i} aqk[t, h, j] v[s_j, h]

with s_j the chunk's j-th token (chunk = 64 tokens from its sequence's start)."""

from __future__ import annotations

import itertools
from typing import Any

import torch

from foreign.sglang_kda_kkt.reference import chunk_cumsum


def make_inputs(
    seqs: int, seqlen: int, heads: int, dk: int, dv: int, chunk: int, *,
    dtype: torch.dtype, device: str, seed: int | None = None,
) -> tuple[Any, ...]:  # fmt: skip
    """(q, v, g, aqk, h, cu_seqlens, chunk, scale): unit-norm q, normal v, Kimi-like
    per-channel log decays (-exp(A_log) * softplus(f - 2)) cumsummed per chunk, a lower
    triangular aqk of q.k-sized entries, states of 0.1-sized entries; `seqs` sequences of
    `seqlen` tokens packed (int32 bounds); scale = dk ** -0.5 (`chunk_kda`'s default).
    Drawn on the device (the 8k trial's states alone are 67 M values)."""
    gen = torch.Generator(device=device)
    gen.manual_seed(seed if seed is not None else int(torch.randint(0, 2**31 - 1, (1,))))
    tokens = seqs * seqlen
    nt = seqs * -(-seqlen // chunk)

    def randn(*shape: int) -> torch.Tensor:
        return torch.randn(*shape, generator=gen, device=device)

    q = torch.nn.functional.normalize(randn(1, tokens, heads, dk), dim=-1)
    a_log = torch.rand(heads, 1, generator=gen, device=device) * 1.5 - 1.0
    g = -torch.exp(a_log) * torch.nn.functional.softplus(randn(1, tokens, heads, dk) - 2.0)
    cu = torch.arange(0, tokens + 1, seqlen, dtype=torch.int32)
    g = chunk_cumsum(g, cu, chunk)
    aqk = randn(1, tokens, heads, chunk) * dk**-0.5
    v = randn(1, tokens, heads, dv)
    h = randn(nt, heads, dk, dv) * 0.1
    return (
        q.to(dtype), v.to(dtype), g, aqk, h.to(dtype), cu.to(device), chunk, dk**-0.5,
    )  # fmt: skip


def reference(
    q: torch.Tensor, v: torch.Tensor, g: torch.Tensor, aqk: torch.Tensor, h: torch.Tensor,
    cu_seqlens: torch.Tensor, chunk: int, scale: float,
) -> torch.Tensor:  # fmt: skip
    """Chunk by chunk in fp32."""
    o = torch.empty_like(v)
    idx = 0
    for start, end in itertools.pairwise(cu_seqlens.tolist()):
        for c in range(start, end, chunk):
            n = min(c + chunk, end) - c
            qg = q[0, c : c + n].float() * scale * torch.exp(g[0, c : c + n].float())
            inter = torch.einsum("nhk,hkv->nhv", qg, h[idx].float())
            a = torch.tril(aqk[0, c : c + n, :, :n].float().permute(1, 0, 2))  # [H, n, n]
            intra = torch.einsum("hij,jhv->ihv", a, v[0, c : c + n].float())
            o[0, c : c + n] = (inter + intra).to(v.dtype)
            idx += 1
    return o


def torch_chunk_o(
    q: torch.Tensor, v: torch.Tensor, g: torch.Tensor, aqk: torch.Tensor, h: torch.Tensor,
    cu_seqlens: torch.Tensor, chunk: int, scale: float,
) -> torch.Tensor:  # fmt: skip
    """The same by torch on the padded [chunks, chunk] view (equal sequence lengths): the
    gated q times the chunk states and the masked aqk times v as two batched einsums in the
    input dtype (the gates applied in fp32)."""
    _, tokens, heads, _ = q.shape
    seqs = cu_seqlens.numel() - 1
    seqlen = tokens // seqs
    nc = -(-seqlen // chunk)
    pad = nc * chunk - seqlen

    def view(x: torch.Tensor) -> torch.Tensor:  # [1, tokens, H, D] -> [chunks, chunk, H, D]
        x = x.view(seqs, seqlen, *x.shape[2:])
        x = torch.nn.functional.pad(x, (0, 0, 0, 0, 0, pad))
        return x.reshape(seqs * nc, chunk, *x.shape[2:])

    qg = (view(q).float() * scale * torch.exp(view(g))).to(q.dtype)
    mask = torch.ones(chunk, chunk, dtype=torch.bool, device=q.device).tril()
    a = (view(aqk) * mask[None, :, None, :]).to(v.dtype)
    o = torch.einsum("nchk,nhkv->nchv", qg, h) + torch.einsum("nihj,njhv->nihv", a, view(v))
    o = o.reshape(seqs, nc * chunk, heads, -1)[:, :seqlen]
    return o.reshape(1, tokens, heads, -1).to(v.dtype)
