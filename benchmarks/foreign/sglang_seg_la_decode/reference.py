"""SGLang's segmented linear attention over a decode batch (Ling/Ring linear models'
`seg_la_fwd`, its decode path): inputs, fp32 reference, torch baseline.

Per live row (one token of a decoding request) and head, with the head's slope lam and the
state S (head_dim x head_dim, fp32) read from the row's slot of the pool:
S <- exp(-lam) S + k^T v;  o = (q S) / sqrt(head_dim).  A padded row (slot -1) reads and
writes no state and its output is zero.  Outputs: o [rows, heads, head_dim] in the inputs'
dtype and the pool with each live row's new S written to its slot (the other slots
unchanged)."""

from __future__ import annotations

import torch

from foreign.sglang_seg_la.reference import LAYER_FRACTION, sglang_slopes


def make_inputs(
    reqs: int, pad: int, heads: int, head_dim: int, *, dtype: torch.dtype, device: str,
    seed: int | None = None,
) -> tuple[torch.Tensor, ...]:  # fmt: skip
    """reqs live rows then pad padded rows (slot -1, as SGLang pads a decode batch to its
    CUDA-graph size); q, k, v at unit scale (after the layer's q/k norms); a pool of
    2 reqs + 1 fp32 states at unit scale, the live rows' slots a random choice of them; the
    slopes of SGLang's formula at the middle layer (factor 1 - 1/2 + 1e-5)."""
    gen = torch.Generator(device="cpu")
    gen.manual_seed(seed if seed is not None else int(torch.randint(0, 2**31 - 1, (1,))))
    rows = reqs + pad
    q = torch.randn(rows, heads, head_dim, generator=gen)
    k = torch.randn(rows, heads, head_dim, generator=gen)
    v = torch.randn(rows, heads, head_dim, generator=gen)
    pool = 2 * reqs + 1
    state = torch.randn(pool, heads, head_dim, head_dim, generator=gen)
    live = torch.randperm(pool, generator=gen)[:reqs]
    slots = torch.cat([live, torch.full((pad,), -1, dtype=live.dtype)]).to(torch.int32)
    factor = 1 - LAYER_FRACTION + 1e-5
    slopes = torch.tensor([s * factor for s in sglang_slopes(heads)], dtype=torch.float32)
    return (
        q.to(dtype=dtype, device=device),
        k.to(dtype=dtype, device=device),
        v.to(dtype=dtype, device=device),
        state.to(device=device),
        slopes.to(device=device),
        slots.to(device=device),
    )


def _step(
    q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, state: torch.Tensor,
    slopes: torch.Tensor, slots: torch.Tensor,
) -> tuple[torch.Tensor, torch.Tensor]:  # fmt: skip
    """One decay-and-update step for every live row at once, in fp32."""
    rows, heads, head_dim = q.shape
    live = slots >= 0
    slot = slots[live].long()
    s = state[slot].float()  # [live, heads, dk, dv]
    decay = torch.exp(-slopes.float())[None, :, None, None]
    s = s * decay + k[live].float()[..., :, None] * v[live].float()[..., None, :]
    out = torch.zeros(rows, heads, head_dim, dtype=torch.float32, device=q.device)
    out[live] = torch.einsum("rhk,rhkv->rhv", q[live].float(), s) * head_dim**-0.5
    final = state.clone()
    final[slot] = s
    return out.to(q.dtype), final


def reference(
    q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, state: torch.Tensor,
    slopes: torch.Tensor, slots: torch.Tensor,
) -> tuple[torch.Tensor, torch.Tensor]:  # fmt: skip
    return _step(q, k, v, state, slopes, slots)


def torch_seg_la_decode(
    q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, state: torch.Tensor,
    slopes: torch.Tensor, slots: torch.Tensor,
) -> tuple[torch.Tensor, torch.Tensor]:  # fmt: skip
    """The same step by torch ops in fp32: the live slots gathered, decayed, updated, read
    out, and scattered back into the pool in place, as the kernel does."""
    out, final = _step(q, k, v, state, slopes, slots)
    state.copy_(final)
    return out, state
