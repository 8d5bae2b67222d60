"""The gated delta rule's chunked state recurrence (SGLang's `chunk_gated_delta_rule_fwd_h`
on packed sequences, the states read from and written back to a pool): inputs, fp32
reference, torch baseline.

k is [1, tokens, kheads, dk] (the l2-normalized keys), w is [1, tokens, heads, dk] and u is
[1, tokens, heads, dv] (the WY form of `recompute_w_u_fwd`, this set's `sglang_gdn_wy`), g
is [1, tokens, heads] in fp32 (the chunk-local cumsum of the log decays), the pool is
[slots, heads, dk, dv] in fp32 and slots is one int32 slot per sequence.  Per sequence and
value head, from S = pool[slot], per 64-token chunk in order (n tokens, g_last its last
gate): h[chunk] = S;  v_new = u - w S;  S <- exp(g_last) S + k^T (v_new * exp(g_last - g)).
Outputs: h [1, chunks, heads, dk, dv] and v_new [1, tokens, heads, dv] in the inputs'
dtype, and the pool with each sequence's final S written to its slot (others unchanged)."""

from __future__ import annotations

import itertools

import torch

from foreign.sglang_gdn_wy import reference as wy


def make_inputs(
    seqs: int, seqlen: int, heads: int, kheads: int, dk: int, dv: int, chunk: int, *,
    dtype: torch.dtype, device: str, seed: int | None = None,
) -> tuple[torch.Tensor, ...]:  # fmt: skip
    """The WY inputs of `sglang_gdn_wy` (unit-norm keys, normal values, sigmoid beta,
    Qwen3-Next-like decays, A the chunks' triangular inverse) carried through its fp32
    reference to w and u in the dtype, so that the recurrence is the real delta rule's;
    a pool of 2 seqs + 1 fp32 states of a decayed earlier context (normal values scaled by
    1 / sqrt(dk)), each sequence's slot a random choice of them (a chunked prefill going
    on: SGLang's kernel reads every sequence's slot, zeroed for a fresh request)."""
    k, v, beta, g, A, cu, chunk = wy.make_inputs(
        seqs, seqlen, heads, kheads, dk, dv, chunk, dtype=dtype, device="cpu", seed=seed
    )
    w, u = wy.reference(k, v, beta, g, A, cu, chunk)
    gen = torch.Generator(device="cpu")
    gen.manual_seed((seed if seed is not None else 0) + 7)
    pool = 2 * seqs + 1
    state = torch.randn(pool, heads, dk, dv, generator=gen) * dk**-0.5
    slots = torch.randperm(pool, generator=gen)[:seqs].to(torch.int32)
    return (
        k.to(device),
        w.to(device),
        u.to(device),
        g.to(device),
        state.to(device),
        slots.to(device),
        cu.to(device),
        chunk,
    )


def _recurrence(
    k: torch.Tensor, w: torch.Tensor, u: torch.Tensor, g: torch.Tensor, state: torch.Tensor,
    slots: torch.Tensor, cu_seqlens: torch.Tensor, chunk: int,
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:  # fmt: skip
    _, tokens, kheads, dk = k.shape
    heads, dv = u.shape[2], u.shape[3]
    bounds = list(itertools.pairwise(cu_seqlens.tolist()))
    nchunks = sum(-(-(e - s) // chunk) for s, e in bounds)
    h = torch.zeros(1, nchunks, heads, dk, dv, dtype=torch.float32, device=k.device)
    v_new = torch.zeros(1, tokens, heads, dv, dtype=torch.float32, device=k.device)
    final = state.clone()
    i = 0
    for n_seq, (start, end) in enumerate(bounds):
        s = state[int(slots[n_seq])].float().clone()  # [H, K, V]
        for c in range(start, end, chunk):
            n = min(c + chunk, end) - c
            h[0, i] = s
            kc = k[0, c : c + n].float().repeat_interleave(heads // kheads, dim=1)
            kc = kc.transpose(0, 1)  # [H, n, K]
            wc = w[0, c : c + n].float().transpose(0, 1)
            uc = u[0, c : c + n].float().transpose(0, 1)  # [H, n, V]
            vn = uc - torch.bmm(wc, s)
            v_new[0, c : c + n] = vn.transpose(0, 1)
            gc = g[0, c : c + n].float().t()  # [H, n]
            g_last = gc[:, -1:]
            vs = vn * torch.exp(g_last - gc)[..., None]
            s = s * torch.exp(g_last)[..., None] + torch.bmm(kc.transpose(1, 2), vs)
            i += 1
        final[int(slots[n_seq])] = s
    return h.to(k.dtype), v_new.to(u.dtype), final


def reference(
    k: torch.Tensor, w: torch.Tensor, u: torch.Tensor, g: torch.Tensor, state: torch.Tensor,
    slots: torch.Tensor, cu_seqlens: torch.Tensor, chunk: int,
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:  # fmt: skip
    return _recurrence(k, w, u, g, state, slots, cu_seqlens, chunk)


def torch_chunk_h(
    k: torch.Tensor, w: torch.Tensor, u: torch.Tensor, g: torch.Tensor, state: torch.Tensor,
    slots: torch.Tensor, cu_seqlens: torch.Tensor, chunk: int,
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:  # fmt: skip
    """The same recurrence as a loop of torch kernels over the chunks, in fp32 (the pool
    written in place, as the kernel does)."""
    h, v_new, final = _recurrence(k, w, u, g, state, slots, cu_seqlens, chunk)
    state.copy_(final)
    return h, v_new, state
