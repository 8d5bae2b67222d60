"""vLLM's Mamba-2 state passing (`_state_passing_fwd` as `_mamba_chunk_scan_combined_fwd`
calls it, initial and final states on): inputs, reference, torch baseline.

states [chunks, heads, state_dim] is each chunk's own final state in fp32 (vLLM's
`_chunk_state_fwd` with states_in_fp32), state_dim being head_dim x d_state flattened;
da_cumsum [heads, chunks, chunk_size] the fp32 cumulative dt * A within each chunk (only
its last position is read); last_chunk_indices [seqs] int32 each sequence's last chunk
(every sequence here has chunks_per_seq chunks); initial_states [seqs, heads, state_dim]
the states read from the SSM cache, in the spec's dtype; final_states [2 * seqs + 1,
heads, state_dim] the SSM cache itself, in the spec's dtype, and final_state_indices
[seqs] int32 each sequence's cache slot.  The outputs are the state entering each chunk
[chunks, heads, state_dim] in the spec's dtype and the cache with each sequence's last
state written at its slot."""

from __future__ import annotations

import torch


def make_inputs(
    seqs: int,
    chunks_per_seq: int,
    heads: int,
    state_dim: int,
    chunk_size: int,
    *,
    dtype: torch.dtype,
    device: str,
    seed: int | None = None,
) -> tuple[torch.Tensor, ...]:
    """Normal chunk states (0.1 scale) and initial states, per-chunk decays dA in [-4,
    -0.05] at the last position (cumulative sums of negative dt * A), each sequence's
    slot drawn from a permutation of 2 * seqs + 1 slots, the cache zeroed; made on the
    device (the large trial's states are 1.1 GB)."""
    gen = torch.Generator(device=device)
    gen.manual_seed(seed if seed is not None else int(torch.randint(0, 2**31 - 1, (1,))))
    nchunks = seqs * chunks_per_seq
    f32 = {"device": device, "dtype": torch.float32, "generator": gen}
    states = torch.randn(nchunks, heads, state_dim, **f32).mul_(0.1)
    steps = torch.rand(heads, nchunks, chunk_size, **f32) * (3.95 / chunk_size) + (
        0.05 / chunk_size
    )
    da_cumsum = -torch.cumsum(steps, dim=-1)
    last = torch.arange(1, seqs + 1, device=device, dtype=torch.int32) * chunks_per_seq - 1
    init = torch.randn(seqs, heads, state_dim, **f32).to(dtype)
    slots = 2 * seqs + 1
    perm = torch.randperm(slots, device=device, generator=gen)[:seqs].to(torch.int32)
    cache = torch.zeros(slots, heads, state_dim, device=device, dtype=dtype)
    return states, da_cumsum, last, init, cache, perm


def reference(
    states: torch.Tensor, da_cumsum: torch.Tensor, last_chunk_indices: torch.Tensor,
    initial_states: torch.Tensor, final_states: torch.Tensor,
    final_state_indices: torch.Tensor,
) -> tuple[torch.Tensor, torch.Tensor]:  # fmt: skip
    """The recurrence h <- exp(dA_last) * h + state, chunk by chunk per sequence in fp64
    (torch.exp, not exp2), each chunk's new state rounded to the output's dtype."""
    dtype = initial_states.dtype
    out = torch.empty(states.shape, dtype=dtype, device=states.device)
    cache = final_states.clone()
    decay = torch.exp(da_cumsum[:, :, -1].double())  # [heads, chunks]
    start = 0
    for b, end in enumerate(last_chunk_indices.tolist()):
        h = initial_states[b].double()
        for c in range(start, end + 1):
            h = decay[:, c, None] * h + states[c].double()
            out[c] = h.to(dtype)
        cache[int(final_state_indices[b])] = h.to(dtype)
        start = end + 1
    return out, cache


def torch_state_passing(
    states: torch.Tensor, da_cumsum: torch.Tensor, last_chunk_indices: torch.Tensor,
    initial_states: torch.Tensor, final_states: torch.Tensor,
    final_state_indices: torch.Tensor,
) -> tuple[torch.Tensor, torch.Tensor]:  # fmt: skip
    """The same recurrence in fp32 torch ops, one chunk index at a time across the
    sequences (every sequence has the same number of chunks here), the final states
    index-copied into the cache."""
    seqs = last_chunk_indices.shape[0]
    nchunks, heads, dim = states.shape
    per = nchunks // seqs
    s = states.view(seqs, per, heads, dim)
    decay = torch.exp(da_cumsum[:, :, -1]).t().reshape(seqs, per, heads, 1)
    out = torch.empty((seqs, per, heads, dim), dtype=initial_states.dtype, device=states.device)
    h = initial_states.float()
    for c in range(per):
        h = decay[:, c] * h + s[:, c]
        out[:, c] = h
    final_states.index_copy_(0, final_state_indices.long(), h.to(final_states.dtype))
    return out.view(nchunks, heads, dim), final_states
