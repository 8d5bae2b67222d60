"""The gated delta rule's WY recompute (SGLang's `recompute_w_u_fwd` on packed sequences):
inputs, fp32 reference, torch baseline.

k is [1, tokens, kheads, dk] (the l2-normalized keys, one key head shared by heads //
kheads value heads), v is [1, tokens, heads, dv], beta and g are [1, tokens, heads] in fp32
(g already the chunk-local cumsum of the log decays), and A is [1, tokens, heads, chunk] in
the keys' dtype: per chunk and value head, (I + strict lower beta K K^T decay)^-1, the
matrix `solve_tril` hands on.  The outputs are w = A (k * beta * exp(g)) ([1, tokens, heads,
dk]) and u = A (v * beta) ([1, tokens, heads, dv]), per chunk of each sequence, in the
inputs' dtype."""

from __future__ import annotations

import itertools

import torch


def _pad_chunks(x: torch.Tensor, seqs: int, chunk: int) -> torch.Tensor:
    """[1, seqs * seqlen, ...] -> [seqs * nc, chunk, ...], zero-padded at each end."""
    _, tokens, *rest = x.shape
    seqlen = tokens // seqs
    nc = -(-seqlen // chunk)
    pad = nc * chunk - seqlen
    xs = x.reshape(seqs, seqlen, *rest)
    xs = torch.nn.functional.pad(xs, (0, 0) * len(rest) + (0, pad))
    return xs.reshape(seqs * nc, chunk, *rest)


def _unpad_chunks(x: torch.Tensor, seqs: int, seqlen: int) -> torch.Tensor:
    rest = x.shape[2:]
    return x.reshape(seqs, -1, *rest)[:, :seqlen].reshape(1, seqs * seqlen, *rest)


def make_inputs(
    seqs: int, seqlen: int, heads: int, kheads: int, dk: int, dv: int, chunk: int, *,
    dtype: torch.dtype, device: str, seed: int | None = None,
) -> tuple[torch.Tensor, ...]:  # fmt: skip
    """Unit-norm keys and normal values in the spec's dtype; beta = sigmoid(b) and the
    chunk-local cumsum of Qwen3-Next-like log decays in fp32; A = (I + strict lower
    beta K K^T exp(g_i - g_j))^-1 per chunk, computed in fp32 and rounded to the dtype as
    SGLang's solve_tril stores it; `seqs` sequences of `seqlen` tokens packed (int32
    bounds); the chunk length."""
    if heads % kheads:
        raise ValueError("heads must be a multiple of kheads")
    gen = torch.Generator(device="cpu")
    gen.manual_seed(seed if seed is not None else int(torch.randint(0, 2**31 - 1, (1,))))
    tokens = seqs * seqlen
    k = torch.nn.functional.normalize(torch.randn(1, tokens, kheads, dk, generator=gen), dim=-1)
    v = torch.randn(1, tokens, heads, dv, generator=gen)
    beta = torch.sigmoid(torch.randn(1, tokens, heads, generator=gen))
    a = torch.randn(1, tokens, heads, generator=gen)
    decay = torch.rand(heads, generator=gen) * 4 + 1
    g = -decay * torch.nn.functional.softplus(a - 4.0)
    g = _pad_chunks(g, seqs, chunk).cumsum(dim=1)  # chunk-local cumsum, padded rows unused
    g = _unpad_chunks(g, seqs, seqlen)
    k = k.to(dtype)
    # A from the rounded keys, in fp32, chunk by chunk (zero rows past each sequence's end)
    kp = _pad_chunks(k.float(), seqs, chunk).repeat_interleave(heads // kheads, dim=2)
    gp = _pad_chunks(g, seqs, chunk).transpose(1, 2)  # [chunks, H, BT]
    bp = _pad_chunks(beta, seqs, chunk).transpose(1, 2)
    kk = torch.einsum("cihd,cjhd->chij", kp, kp)
    dec = torch.exp((gp[..., :, None] - gp[..., None, :]).clamp_max(0.0))
    strict = torch.tril(kk * dec * bp[..., :, None], diagonal=-1)
    eye = torch.eye(chunk).expand_as(strict)
    inv = torch.linalg.solve_triangular(eye + strict, eye, upper=False)
    A = _unpad_chunks(inv.permute(0, 2, 1, 3), seqs, seqlen)
    cu = torch.arange(0, tokens + 1, seqlen, dtype=torch.int32)
    return (
        k.to(device),
        v.to(dtype=dtype, device=device),
        beta.to(device),
        g.contiguous().to(device),
        A.to(dtype=dtype, device=device).contiguous(),
        cu.to(device),
        chunk,
    )


def reference(
    k: torch.Tensor, v: torch.Tensor, beta: torch.Tensor, g: torch.Tensor, A: torch.Tensor,
    cu_seqlens: torch.Tensor, chunk: int,
) -> tuple[torch.Tensor, torch.Tensor]:  # fmt: skip
    """Chunk by chunk of each sequence, in fp32 from the rounded inputs."""
    _, tokens, kheads, dk = k.shape
    heads, dv = v.shape[2], v.shape[3]
    w = torch.zeros(1, tokens, heads, dk, dtype=torch.float32, device=k.device)
    u = torch.zeros(1, tokens, heads, dv, dtype=torch.float32, device=k.device)
    for start, end in itertools.pairwise(cu_seqlens.tolist()):
        for c in range(start, end, chunk):
            n = min(c + chunk, end) - c
            a = A[0, c : c + n, :, :n].float().permute(1, 0, 2)  # [H, n, n]
            bt = beta[0, c : c + n].float()  # [n, H]
            kc = k[0, c : c + n].float().repeat_interleave(heads // kheads, dim=1)
            kb = kc * (bt * torch.exp(g[0, c : c + n].float()))[..., None]  # [n, H, K]
            vb = v[0, c : c + n].float() * bt[..., None]
            w[0, c : c + n] = torch.bmm(a, kb.transpose(0, 1)).transpose(0, 1)
            u[0, c : c + n] = torch.bmm(a, vb.transpose(0, 1)).transpose(0, 1)
    return w.to(k.dtype), u.to(v.dtype)


def torch_wy(
    k: torch.Tensor, v: torch.Tensor, beta: torch.Tensor, g: torch.Tensor, A: torch.Tensor,
    cu_seqlens: torch.Tensor, chunk: int,
) -> tuple[torch.Tensor, torch.Tensor]:  # fmt: skip
    """The same products by torch on the padded [chunks, chunk] view (equal sequence
    lengths: two batched matmuls in the input dtype, no host loop)."""
    seqs = cu_seqlens.numel() - 1
    _, tokens, kheads, _ = k.shape
    heads = v.shape[2]
    seqlen = tokens // seqs
    scale = beta * torch.exp(g)
    kb = (k.repeat_interleave(heads // kheads, dim=2) * scale[..., None]).to(k.dtype)
    vb = (v * beta[..., None]).to(v.dtype)
    ap = _pad_chunks(A, seqs, chunk).transpose(1, 2)  # [chunks, H, BT, BT]
    kp = _pad_chunks(kb, seqs, chunk).transpose(1, 2)  # [chunks, H, BT, K]
    vp = _pad_chunks(vb, seqs, chunk).transpose(1, 2)
    w = _unpad_chunks((ap @ kp).transpose(1, 2), seqs, seqlen)
    u = _unpad_chunks((ap @ vp).transpose(1, 2), seqs, seqlen)
    return w, u
