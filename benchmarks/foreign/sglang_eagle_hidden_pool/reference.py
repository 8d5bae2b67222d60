"""SGLang's multi-layer EAGLE hidden-state pool store (the `assign_hidden_states_pool_kernel`
launch of `assign_hidden_states_pool_triton`, which the spec-v2 multi-layer EAGLE worker
calls after each draft extend to keep the target's last hidden states of every request for
KV-cache reversion): inputs, reference, torch baseline.

A draft-extend batch of `reqs` requests, each extending `extend` tokens (SGLang's spec v2
packs every request's num_draft_tokens), of the target model's hidden size.  hidden_states
is [reqs * extend, hidden] in the spec's dtype (the target's hidden states of the batch);
req_pool_indices [reqs] int64 is each request's slot in the request pool (a permutation of
2 * reqs + 1 slots; slot 0 unused, as SGLang's pool reserves none but a slot is never
reused within a batch); extend_seq_lens and extend_start_loc [reqs] int32;
req_to_hidden_states_pool [2 * reqs + 1, pool, hidden] in the spec's dtype, its earlier
contents arbitrary (torch.empty in SGLang; normal values here).  `pool` is the number of
hidden-state rows kept per request (speculative_num_steps - 1).  The output is the pool,
with every request's slot holding the last `pool` rows of its extend segment, in place."""

from __future__ import annotations

import torch


def make_inputs(
    reqs: int,
    extend: int,
    pool: int,
    hidden: int,
    *,
    dtype: torch.dtype,
    device: str,
    seed: int | None = None,
) -> tuple[torch.Tensor, ...]:
    """Normal hidden states and pool contents; slots drawn from a permutation."""
    gen = torch.Generator(device="cpu")
    gen.manual_seed(seed if seed is not None else int(torch.randint(0, 2**31 - 1, (1,))))
    if pool > extend:
        raise ValueError(f"pool {pool} must not exceed extend {extend}")
    slots = 2 * reqs + 1
    hidden_states = torch.randn(reqs * extend, hidden, generator=gen).to(dtype)
    indices = (torch.randperm(slots - 1, generator=gen)[:reqs] + 1).to(torch.int64)
    lens = torch.full((reqs,), extend, dtype=torch.int32)
    starts = (torch.arange(reqs, dtype=torch.int32) * extend).to(torch.int32)
    table = torch.randn(slots, pool, hidden, generator=gen).to(dtype)
    return (
        hidden_states.to(device), indices.to(device), table.to(device), lens.to(device),
        starts.to(device),
    )  # fmt: skip


def reference(
    hidden_states: torch.Tensor, req_pool_indices: torch.Tensor,
    req_to_hidden_states_pool: torch.Tensor, extend_seq_lens: torch.Tensor,
    extend_start_loc: torch.Tensor,
) -> torch.Tensor:  # fmt: skip
    """Request by request on a CPU copy of the pool: the last `pool` rows of its segment
    copied into its slot."""
    out = req_to_hidden_states_pool.detach().cpu().clone()
    h = hidden_states.detach().cpu()
    pool = out.shape[1]
    for slot, n, start in zip(
        req_pool_indices.cpu().tolist(), extend_seq_lens.cpu().tolist(),
        extend_start_loc.cpu().tolist(), strict=True,
    ):  # fmt: skip
        end = start + n
        out[slot] = h[end - pool : end]
    return out.to(req_to_hidden_states_pool.device)


def torch_pool_store(
    hidden_states: torch.Tensor, req_pool_indices: torch.Tensor,
    req_to_hidden_states_pool: torch.Tensor, extend_seq_lens: torch.Tensor,
    extend_start_loc: torch.Tensor,
) -> torch.Tensor:  # fmt: skip
    """The same by torch ops over the batch, in place: the rows' indices built from the
    segment ends, gathered, and written into the slots by index_copy_."""
    pool = req_to_hidden_states_pool.shape[1]
    ends = (extend_start_loc + extend_seq_lens).long()
    rows = ends[:, None] - pool + torch.arange(pool, device=ends.device)
    req_to_hidden_states_pool.index_copy_(0, req_pool_indices, hidden_states[rows])
    return req_to_hidden_states_pool
