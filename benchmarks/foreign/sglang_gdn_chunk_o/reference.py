"""The gated delta rule's chunked output (SGLang's `chunk_fwd_o`, as its Qwen3-Next
prefill calls it with packed sequences): inputs, fp32 reference, torch baseline.

q and k are [1, tokens, kheads, dk] (value head h reads key head h // (heads / kheads)),
v (the delta rule's v_new) is [1, tokens, heads, dv], h the states each chunk starts from,
[chunks, heads, dk, dv] in the dtype as `chunk_gated_delta_rule_fwd_h` leaves them, g the
chunk-local running sum of the log decays [1, tokens, heads] in fp32, cu_seqlens the int32
sequence bounds.  Per chunk and value head, with rows i, j of the chunk:

    o[i] = scale * (exp(g[i]) q[i] h + sum_{j <= i} exp(g[i] - g[j]) (q[i] . k[j]) v[j])

`chunk_size` is the chunk the states were made with; the kernel's BT is
min(chunk_size, max(16, next_power_of_2(tokens))), as SGLang computes it."""

from __future__ import annotations

import itertools

import torch


def block_t(tokens: int, chunk: int) -> int:
    """SGLang's BT: min(chunk_size, max(16, triton.next_power_of_2(T)))."""
    return min(chunk, max(16, 1 << max(0, (tokens - 1).bit_length())))


def make_inputs(
    seqs: int, seqlen: int, heads: int, kheads: int, dk: int, dv: int, chunk: int, *,
    dtype: torch.dtype, device: str, seed: int | None = None,
) -> tuple[torch.Tensor, ...]:  # fmt: skip
    """Unit-norm queries and keys (SGLang l2-normalises them), normal values, states of a
    decayed context (normal, scaled by 1 / sqrt(dk)) and Qwen3-Next-like log decays
    (-softplus of a biased projection times exp(A_log)) summed within each chunk; `seqs`
    equal sequences packed."""
    if heads % kheads:
        raise ValueError("heads must be a multiple of kheads")
    gen = torch.Generator(device="cpu")
    gen.manual_seed(seed if seed is not None else int(torch.randint(0, 2**31 - 1, (1,))))
    tokens = seqs * seqlen
    bt = block_t(tokens, chunk)
    q = torch.nn.functional.normalize(torch.randn(1, tokens, kheads, dk, generator=gen), dim=-1)
    k = torch.nn.functional.normalize(torch.randn(1, tokens, kheads, dk, generator=gen), dim=-1)
    v = torch.randn(1, tokens, heads, dv, generator=gen)
    nchunks = seqs * -(-seqlen // bt)
    h = torch.randn(nchunks, heads, dk, dv, generator=gen) * dk**-0.5
    a = torch.exp(torch.rand(heads, generator=gen) * 2.0 - 1.0)
    raw = torch.randn(1, tokens, heads, generator=gen) - 2.0
    g = -torch.nn.functional.softplus(raw) * a
    cu = torch.arange(seqs + 1, dtype=torch.int32) * seqlen
    for s, e in itertools.pairwise(cu.tolist()):
        for c in range(s, e, bt):
            g[:, c : min(e, c + bt)] = torch.cumsum(g[:, c : min(e, c + bt)], dim=1)
    return (
        q.to(dtype=dtype, device=device), k.to(dtype=dtype, device=device),
        v.to(dtype=dtype, device=device), h.to(dtype=dtype, device=device),
        g.to(device), cu.to(device), chunk,
    )  # fmt: skip


def _chunk_o(
    q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, h: torch.Tensor, g: torch.Tensor,
    cu_seqlens: torch.Tensor, chunk: int, acc: torch.dtype,
) -> torch.Tensor:  # fmt: skip
    _, tokens, kheads, dk = q.shape
    heads = v.shape[2]
    rep = heads // kheads
    bt = block_t(tokens, chunk)
    scale = dk**-0.5
    o = torch.zeros(v.shape, dtype=torch.float32, device=v.device)
    n = 0
    for s, e in itertools.pairwise(cu_seqlens.tolist()):
        for c in range(s, e, bt):
            end = min(e, c + bt)
            qc = q[0, c:end].repeat_interleave(rep, dim=1).transpose(0, 1).to(acc)  # [H, L, K]
            kc = k[0, c:end].repeat_interleave(rep, dim=1).transpose(0, 1).to(acc)
            vc = v[0, c:end].transpose(0, 1).to(acc)  # [H, L, V]
            gc = g[0, c:end].transpose(0, 1).float()  # [H, L]
            inter = (qc @ h[n].to(acc)).float() * torch.exp(gc)[..., None]
            diff = gc[:, :, None] - gc[:, None, :]
            decay = torch.exp(torch.where(diff <= 0, diff, float("-inf")))
            a = (qc @ kc.transpose(1, 2)).float() * decay
            a = torch.tril(a)
            intra = (a.to(acc) @ vc).float()
            o[0, c:end] = (scale * (inter + intra)).transpose(0, 1)
            n += 1
    return o


def reference(
    q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, h: torch.Tensor, g: torch.Tensor,
    cu_seqlens: torch.Tensor, chunk: int,
) -> torch.Tensor:  # fmt: skip
    return _chunk_o(q, k, v, h, g, cu_seqlens, chunk, torch.float32).to(v.dtype)


def torch_chunk_o(
    q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, h: torch.Tensor, g: torch.Tensor,
    cu_seqlens: torch.Tensor, chunk: int,
) -> torch.Tensor:  # fmt: skip
    """The same by torch, chunk by chunk: batched products over the heads in the input
    dtype, the decays applied in fp32."""
    return _chunk_o(q, k, v, h, g, cu_seqlens, chunk, v.dtype).to(v.dtype)
