"""Lightning attention's one-token decode step (vLLM's `linear_decode_forward_triton`, the
decode half of MiniMax-Text-01's and MiniMax-M1's linear-attention layers): inputs, fp32
reference, torch baseline.

q, k and v are [seqs, heads, 1, d] in fp32 (vLLM takes silu of the fp32 qkv projection and
unsqueezes each to this shape), the state pool is [slots, heads, d, d] in the spec's dtype
(the linear-attention cache, the model's dtype unless the mamba cache dtype says fp32),
slope is [heads] fp32 (each head's decay rate) and slots one int32 pool slot per sequence
(-1, vLLM's PAD_SLOT_ID, skips it).  Per sequence and head, with S its slot's state:
    S <- exp(-slope) S + k^T v;  o = q S.
Outputs: o [seqs, heads, 1, d] in fp32 and the pool with each sequence's new state written
to its slot (others unchanged)."""

from __future__ import annotations

import torch


def make_inputs(
    seqs: int, heads: int, d: int, *, dtype: torch.dtype, device: str, seed: int | None = None
) -> tuple[torch.Tensor, ...]:
    """silu of normal q, k and v (vLLM's activation on the fp32 projection); MiniMax's ALiBi-
    style slopes 2^(-8 (h + 1) / heads) (a middle layer's factor of about one half left
    out); a pool of 2 seqs + 1 states of a decayed context (normal values scaled by d^-1/2,
    rounded to the dtype), each sequence's slot a distinct random one."""
    gen = torch.Generator(device="cpu")
    gen.manual_seed(seed if seed is not None else int(torch.randint(0, 2**31 - 1, (1,))))
    q, k, v = (
        torch.nn.functional.silu(torch.randn(seqs, heads, 1, d, generator=gen)) for _ in range(3)
    )
    slope = torch.exp2(-8.0 * torch.arange(1, heads + 1) / heads).float()
    pool = 2 * seqs + 1
    state = (torch.randn(pool, heads, d, d, generator=gen) * d**-0.5).to(dtype)
    slots = torch.randperm(pool, generator=gen)[:seqs].to(torch.int32)
    return tuple(t.to(device) for t in (q, k, v, state, slope, slots))


def _step(
    q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, state: torch.Tensor,
    slope: torch.Tensor, slots: torch.Tensor,
) -> tuple[torch.Tensor, torch.Tensor]:  # fmt: skip
    out = torch.zeros_like(q, dtype=torch.float32)
    new = state.clone()
    live = (slots >= 0).nonzero().flatten()
    idx = slots[live].long()
    s = state[idx].float()  # [n, H, d, d]
    decay = torch.exp(-slope.float())[None, :, None, None]
    s = decay * s + k[live].float().transpose(-1, -2) @ v[live].float()
    out[live] = q[live].float() @ s
    new[idx] = s.to(state.dtype)
    return out, new


def reference(
    q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, state: torch.Tensor,
    slope: torch.Tensor, slots: torch.Tensor,
) -> tuple[torch.Tensor, torch.Tensor]:  # fmt: skip
    """In fp32: the slot's state decayed plus the outer product k^T v, the output q times
    that fp32 state (the kernel rounds the state to the dtype only when storing it)."""
    return _step(q, k, v, state, slope, slots)


def torch_lightning_decode(
    q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, state: torch.Tensor,
    slope: torch.Tensor, slots: torch.Tensor,
) -> tuple[torch.Tensor, torch.Tensor]:  # fmt: skip
    """The same by torch ops, the pool updated in place as vLLM's kernel does: gather the
    live slots' states, a batched outer product and matmul in fp32, scatter back."""
    out, new = _step(q, k, v, state, slope, slots)
    state.copy_(new)
    return out, state
