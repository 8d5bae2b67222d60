"""vLLM's Mamba-2 chunk scan (`_chunk_scan_fwd` as `_mamba_chunk_scan_combined_fwd` calls
it for MambaMixer2's prefill: D per head, no z gate, initial states on): inputs,
reference, torch baseline.

The batch is `seqs` packed sequences of `seq_len` tokens, cut into `chunk_size`-token
chunks (the last chunk of each sequence partial when seq_len is not a multiple).
cb [chunks, groups, chunk_size, chunk_size] is C B^T within each chunk in fp32 (vLLM's
`_bmm_chunk_fwd`, zero outside the chunk); x [tokens, heads, head_dim] the SSM input;
dt and da_cumsum [heads, chunks, chunk_size] the fp32 step sizes and their within-chunk
cumulative dt * A (`_chunk_cumsum_fwd`, zero dt past a chunk's end); C [tokens, groups,
d_state]; states [chunks, heads, head_dim, d_state] the state entering each chunk's
successor (`_state_passing_fwd`'s output, in the dtype); cu_chunk_seqlens [chunks + 1] and
seq_idx [chunks] int32 (each chunk's token range and sequence); D [heads] fp32 (the skip
connection, MambaMixer2's fp32 parameter); initial_states [seqs, heads, head_dim, d_state]
the cached states in the dtype.  The output [tokens, heads, head_dim] in the dtype is, for
token t of chunk c and head h (group g = h // (heads / groups)):
  exp(dA_t) C_t . h_prev  +  sum_{j <= t in c} cb[t, j] exp(min(dA_t - dA_j, 0)) dt_j x_j
  +  D_h x_t,
h_prev being the sequence's initial state for its first chunk, else states[c - 1]."""

from __future__ import annotations

import math

import torch


def chunk_layout(seqs: int, seq_len: int, chunk_size: int) -> tuple[list[int], list[int]]:
    """(cu_chunk_seqlens, seq_idx) as lists: each sequence cut into chunk_size-token chunks."""
    cu, idx = [0], []
    for s in range(seqs):
        for start in range(0, seq_len, chunk_size):
            cu.append(s * seq_len + min(start + chunk_size, seq_len))
            idx.append(s)
    return cu, idx


def make_inputs(
    seqs: int,
    seq_len: int,
    heads: int,
    head_dim: int,
    groups: int,
    d_state: int,
    chunk_size: int,
    *,
    dtype: torch.dtype,
    device: str,
    seed: int | None = None,
) -> tuple[torch.Tensor, ...]:
    """Normal x, B and C (B and C scaled by d_state ** -0.25, so C B^T is of order 1), dt
    uniform in [0.001, 0.1] (softplus outputs), A = -exp(U[log 1, log 16]) per head as
    Mamba-2 initialises it, states and initial states normal at 0.1 scale, D uniform in
    [0.5, 1.5]; cb computed from B and C in fp32 per chunk; made on the device."""
    gen = torch.Generator(device=device)
    gen.manual_seed(seed if seed is not None else int(torch.randint(0, 2**31 - 1, (1,))))
    cu_list, idx_list = chunk_layout(seqs, seq_len, chunk_size)
    nchunks = len(idx_list)
    tokens = seqs * seq_len
    f32 = {"device": device, "dtype": torch.float32, "generator": gen}
    x = torch.randn(tokens, heads, head_dim, **f32).to(dtype)
    b = (torch.randn(tokens, groups, d_state, **f32) * d_state**-0.25).to(dtype)
    c = (torch.randn(tokens, groups, d_state, **f32) * d_state**-0.25).to(dtype)
    dt = torch.rand(heads, nchunks, chunk_size, **f32) * 0.099 + 0.001
    a = -torch.exp(torch.rand(heads, **f32) * math.log(16.0))
    cb = torch.zeros(nchunks, groups, chunk_size, chunk_size, device=device)
    for ci in range(nchunks):
        st, en = cu_list[ci], cu_list[ci + 1]
        n = en - st
        dt[:, ci, n:] = 0.0
        cc, bb = c[st:en].float(), b[st:en].float()  # [n, groups, d_state]
        cb[ci, :, :n, :n] = torch.einsum("tgn,sgn->gts", cc, bb)
    da_cumsum = torch.cumsum(dt * a[:, None, None], dim=-1)
    states = (torch.randn(nchunks, heads, head_dim, d_state, **f32) * 0.1).to(dtype)
    d = torch.rand(heads, **f32) + 0.5
    init = (torch.randn(seqs, heads, head_dim, d_state, **f32) * 0.1).to(dtype)
    cu = torch.tensor(cu_list, dtype=torch.int32, device=device)
    seq_idx = torch.tensor(idx_list, dtype=torch.int32, device=device)
    return cb, x, dt, da_cumsum, c, states, cu, seq_idx, d, init


def _scan(
    cb: torch.Tensor, x: torch.Tensor, dt: torch.Tensor, da_cumsum: torch.Tensor,
    C: torch.Tensor, states: torch.Tensor, cu_chunk_seqlens: torch.Tensor,
    seq_idx: torch.Tensor, D: torch.Tensor, initial_states: torch.Tensor, wide: torch.dtype,
) -> torch.Tensor:  # fmt: skip
    heads = x.shape[1]
    groups = C.shape[1]
    ratio = heads // groups
    out = torch.empty(x.shape, dtype=x.dtype, device=x.device)
    cu = cu_chunk_seqlens.tolist()
    idx = seq_idx.tolist()
    for ci in range(len(idx)):
        st, en = cu[ci], cu[ci + 1]
        n = en - st
        first = ci == 0 or idx[ci - 1] != idx[ci]
        prev = (initial_states[idx[ci]] if first else states[ci - 1]).to(wide)  # [H, P, N]
        ch = C[st:en].to(wide).repeat_interleave(ratio, dim=1)  # [n, H, N]
        da = da_cumsum[:, ci, :n].to(wide)  # [H, n]
        xs = x[st:en].to(wide)  # [n, H, P]
        inter = torch.einsum("thn,hpn->thp", ch, prev) * torch.exp(da).T[:, :, None]
        w = cb[ci, :, :n, :n].to(wide).repeat_interleave(ratio, dim=0)  # [H, n, n]
        decay = torch.exp(torch.clamp(da[:, :, None] - da[:, None, :], max=0.0))
        causal = torch.ones(n, n, dtype=torch.bool, device=x.device).tril()
        w = torch.where(causal, w * decay * dt[:, ci, None, :n].to(wide), 0.0)
        intra = torch.einsum("hts,shp->thp", w, xs)
        out[st:en] = (inter + intra + D.to(wide)[None, :, None] * xs).to(x.dtype)
    return out


def reference(
    cb: torch.Tensor, x: torch.Tensor, dt: torch.Tensor, da_cumsum: torch.Tensor,
    C: torch.Tensor, states: torch.Tensor, cu_chunk_seqlens: torch.Tensor,
    seq_idx: torch.Tensor, D: torch.Tensor, initial_states: torch.Tensor,
) -> torch.Tensor:  # fmt: skip
    """Chunk by chunk in fp64 (torch.exp, not exp2), every head at once, rounded to the
    dtype."""
    return _scan(
        cb, x, dt, da_cumsum, C, states, cu_chunk_seqlens, seq_idx, D, initial_states,
        torch.float64,
    )  # fmt: skip


def torch_chunk_scan(
    cb: torch.Tensor, x: torch.Tensor, dt: torch.Tensor, da_cumsum: torch.Tensor,
    C: torch.Tensor, states: torch.Tensor, cu_chunk_seqlens: torch.Tensor,
    seq_idx: torch.Tensor, D: torch.Tensor, initial_states: torch.Tensor,
) -> torch.Tensor:  # fmt: skip
    """The same chunk loop in fp32 torch ops (einsums per chunk)."""
    return _scan(
        cb, x, dt, da_cumsum, C, states, cu_chunk_seqlens, seq_idx, D, initial_states,
        torch.float32,
    )  # fmt: skip
