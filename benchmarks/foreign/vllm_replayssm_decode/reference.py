"""vLLM's ReplaySSM Mamba-2 decode step (`selective_state_update_replayssm_output_only`, as
`MambaMixer2` calls it for the decode tokens of every Mamba-2 layer of a Nemotron-H model
under `--use-replayssm` with the Triton backend): inputs, reference, torch baseline.

Per decode row (one token of a sequence) and SSM head: x [seqs, heads, head_dim], the raw
dt [seqs, heads], B and C [seqs, groups, dstate] in the model's dtype, as the mixer has them
after the conv; A [heads] in fp32, D and dt_bias [heads] in the dtype (the mixer expands all
three over head_dim, and A over dstate, by stride-0 views).  The layer's pool holds per slot
its checkpoint state [heads, head_dim, dstate] (the dtype) and a ring of the tokens since:
x_cache [heads, window, head_dim] and B_cache [groups, window, dstate] in the dtype,
dt_cache [heads, window] in fp32.  `slots` maps rows to pool slots (0 is vLLM's null
block), `write_pos` is the row's ring position p (the tokens buffered before it) and
`is_flush` (int8) says the ring is full (p = window - 1), as vLLM's planning kernel writes
them.  The step, with dt' = softplus(dt + dt_bias), the window's dt'_j (the cached ones and
the token's at j = p), w_j = dt'_j exp(A sum_{i>j} dt'_i) and decay = exp(A sum dt'):
  - p < window - 1: y = decay (S0 C) + sum_j w_j (B_j . C) x_j + D x; the token's x, dt' and
    B are stored at ring position p; the state is left as it is.
  - p = window - 1 (flush): S = decay S0 + sum_j x_j (w_j B_j)^T is stored to the slot
    (rounded to the dtype) and y = S C + D x; the ring is left as it is.
Outputs: y [seqs, heads, head_dim] in the dtype, the pool's state, x_cache, dt_cache and
B_cache (updated in place)."""

from __future__ import annotations

import torch

MULTIPLIER = 7  # ring positions (MULTIPLIER * row + OFFSET) % window: spread, flushes included
OFFSET = 3


def ring_positions(seqs: int, window: int) -> list[int]:
    """Each row's ring position: a steady decode stream's sequences sit at every position of
    their ring, so about one row in `window` flushes (rows 4, 20, ... at a 16-token ring)."""
    return [(MULTIPLIER * i + OFFSET) % window for i in range(seqs)]


def make_inputs(
    seqs: int, heads: int, head_dim: int, dstate: int, groups: int, window: int, *,
    dtype: torch.dtype, device: str, seed: int | None = None,
) -> tuple[object, ...]:  # fmt: skip
    """Unit-normal x, B, C and ring rows; dt around 0 with Mamba-2's dt_bias (softplus(dt
    + dt_bias) about 0.001 to 0.5) and A = -exp(A_log) in [-16, -1]; D about 1; a state
    of about 0.5 (S0 C of order a few).  Slots 1..seqs in a random order (slot 0 is the
    null block, left unread); ring rows at or past a row's position hold values ten times
    larger, so a kernel reading them would be far off.  Drawn on the device."""
    if heads % groups or window < 1:
        raise ValueError("heads must be a multiple of groups, window >= 1")
    gen = torch.Generator(device=device)
    gen.manual_seed(seed if seed is not None else int(torch.randint(0, 2**31 - 1, (1,))))
    f = torch.float32

    def randn(*shape: int) -> torch.Tensor:
        return torch.randn(*shape, generator=gen, device=device, dtype=f)

    def rand(*shape: int) -> torch.Tensor:
        return torch.rand(*shape, generator=gen, device=device, dtype=f)

    pool = seqs + 1
    x = randn(seqs, heads, head_dim)
    dt = randn(seqs, heads) * 0.5
    dt_bias = torch.log(torch.expm1(0.001 + 0.099 * rand(heads)))
    a = -(1 + 15 * rand(heads))  # -exp(A_log)
    b, c = randn(seqs, groups, dstate), randn(seqs, groups, dstate)
    d = 1 + 0.1 * randn(heads)
    state = randn(pool, heads, head_dim, dstate) * 0.5
    x_cache = randn(pool, heads, window, head_dim)
    dt_cache = 0.001 + 0.3 * rand(pool, heads, window)
    b_cache = randn(pool, groups, window, dstate)
    slots = 1 + torch.randperm(seqs, generator=gen, device=device).to(torch.int32)
    pos = torch.tensor(ring_positions(seqs, window), dtype=torch.int32, device=device)
    stale = torch.arange(window, device=device)[None, :] >= pos[:, None]  # [seqs, window]
    rows = slots.long()
    x_cache[rows] = torch.where(stale[:, None, :, None], 10 * x_cache[rows], x_cache[rows])
    dt_cache[rows] = torch.where(stale[:, None, :], 10 * dt_cache[rows], dt_cache[rows])
    b_cache[rows] = torch.where(stale[:, None, :, None], 10 * b_cache[rows], b_cache[rows])
    is_flush = (pos == window - 1).to(torch.int8)
    in_dtype = tuple(t.to(dtype) for t in (x, dt, b, c, d, dt_bias, state, x_cache, b_cache))
    x, dt, b, c, d, dt_bias, state, x_cache, b_cache = in_dtype
    return x, dt, a, b, c, d, dt_bias, state, x_cache, dt_cache, b_cache, pos, is_flush, slots


def _step(
    x: torch.Tensor, dt: torch.Tensor, a: torch.Tensor, b: torch.Tensor, c: torch.Tensor,
    d: torch.Tensor, dt_bias: torch.Tensor, state: torch.Tensor, x_cache: torch.Tensor,
    dt_cache: torch.Tensor, b_cache: torch.Tensor, pos: torch.Tensor, is_flush: torch.Tensor,
    slots: torch.Tensor,
) -> tuple[torch.Tensor, ...]:  # fmt: skip
    """The step for every row at once in fp32 (the window padded to `window` positions and
    masked past each row's), the pool copied and updated."""
    f = torch.float32
    heads = x.shape[1]
    groups, window = b.shape[1], x_cache.shape[2]
    ratio = heads // groups
    rows = slots.long()
    j = torch.arange(window, device=x.device)
    cached = j[None, :] < pos[:, None].long()  # [seqs, window]: ring rows before the token
    here = j[None, :] == pos[:, None].long()  # the token's own position
    live = cached | here
    dt_cur = dt.to(f) + dt_bias.to(f)[None, :]
    dt_cur = torch.where(dt_cur <= 20.0, torch.log(torch.exp(dt_cur) + 1), dt_cur)
    dts = torch.where(cached[:, None, :], dt_cache[rows], 0.0)
    dts = torch.where(here[:, None, :], dt_cur[:, :, None], dts)  # [seqs, heads, window]
    da = a.to(f)[None, :, None] * dts
    total = da.sum(-1, keepdim=True)
    w = dts * torch.exp(total - da.cumsum(-1))  # [seqs, heads, window]
    decay = torch.exp(total)  # [seqs, heads, 1]
    xs = torch.where(cached[:, None, :, None], x_cache[rows].to(f), 0.0)
    xs = torch.where(here[:, None, :, None], x.to(f)[:, :, None, :], xs)  # [s, h, win, dim]
    bs = torch.where(cached[:, None, :, None], b_cache[rows].to(f), 0.0)
    bs = torch.where(here[:, None, :, None], b.to(f)[:, :, None, :], bs)  # [s, g, win, n]
    bs = bs.repeat_interleave(ratio, dim=1)  # [seqs, heads, window, dstate]
    cs = c.to(f).repeat_interleave(ratio, dim=1)  # [seqs, heads, dstate]
    s0 = state[rows].to(f)  # [seqs, heads, dim, dstate]
    # output-only route: the checkpoint read out, decayed, plus the window's replay
    bc = torch.einsum("shjn,shn->shj", bs, cs)
    y_ring = decay[..., 0, None] * torch.einsum("shdn,shn->shd", s0, cs)
    y_ring = y_ring + torch.einsum("shjd,shj->shd", xs, torch.where(live[:, None], w * bc, 0))
    # flush route: the state rebuilt (B w rounded to the dtype, as the kernel feeds its
    # tl.dot), stored in the dtype, read out unrounded
    bw = (bs * w[..., None]).to(x.dtype).to(f)
    s_new = decay[..., None] * s0 + torch.einsum("shjd,shjn->shdn", xs, bw)
    y_flush = torch.einsum("shdn,shn->shd", s_new, cs)
    flush = is_flush.bool()
    y = torch.where(flush[:, None, None], y_flush, y_ring) + x.to(f) * d.to(f)[None, :, None]
    new_state = state.clone()
    new_state[rows[flush]] = s_new[flush].to(state.dtype)
    new_x, new_dt, new_b = x_cache.clone(), dt_cache.clone(), b_cache.clone()
    keep = ~flush
    r, p = rows[keep], pos.long()[keep]
    new_x[r, :, p] = x[keep]
    new_dt[r, :, p] = dt_cur[keep]
    new_b[r, :, p] = b[keep]
    return y.to(x.dtype), new_state, new_x, new_dt, new_b


def reference(*inputs: object) -> tuple[torch.Tensor, ...]:
    """In fp32 from the dtype's values; the output and a flushed state rounded once, the
    rebuilt state's B w terms rounded to the dtype as the kernel's tl.dot takes them."""
    return _step(*inputs)  # type: ignore[arg-type]


def torch_replayssm_decode(*inputs: object) -> tuple[torch.Tensor, ...]:
    """The same step by torch ops (the rows' slots and rings gathered, fp32 intermediates,
    both routes computed for every row and selected, several launches), the pool's state
    and rings stored back in place as the kernels do."""
    y, new_state, new_x, new_dt, new_b = _step(*inputs)  # type: ignore[arg-type]
    state, x_cache, dt_cache, b_cache = inputs[7], inputs[8], inputs[9], inputs[10]
    state.copy_(new_state)  # type: ignore[union-attr]
    x_cache.copy_(new_x)  # type: ignore[union-attr]
    dt_cache.copy_(new_dt)  # type: ignore[union-attr]
    b_cache.copy_(new_b)  # type: ignore[union-attr]
    return y, state, x_cache, dt_cache, b_cache  # type: ignore[return-value]
