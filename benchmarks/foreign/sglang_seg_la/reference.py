"""SGLang's segmented linear attention over an extend batch (Ling/Ring linear models'
`seg_la_fwd`, its prefill path): inputs, fp32 reference, torch baseline.

Per request and head, with the head's slope lam and the state S (head_dim x head_dim, fp32)
read from the request's slot of the pool when the request continues a chunked prefill, else
zero, per token t in order: S <- exp(-lam) S + k_t^T v_t;  o_t = (q_t S) / sqrt(head_dim).
Outputs: o [tokens, heads, head_dim] in the inputs' dtype and the pool with each request's
final S written to its slot (the other slots unchanged)."""

from __future__ import annotations

import math

import torch

LAYER_FRACTION = 0.5  # the slopes of a layer halfway through the model


def sglang_slopes(heads: int) -> list[float]:
    """The ALiBi-style slopes of SGLang's `_build_slope_tensor` (as MiniMax's lightning
    attention defines them), before the per-layer factor."""

    def power_of_2(n: int) -> list[float]:
        start = 2 ** (-(2 ** -(math.log2(n) - 3)))
        return [start * start**i for i in range(n)]

    if math.log2(heads).is_integer():
        return power_of_2(heads)
    closest = 2 ** math.floor(math.log2(heads))
    return power_of_2(closest) + sglang_slopes(2 * closest)[0::2][: heads - closest]


def make_inputs(
    reqs: int, tokens: int, heads: int, head_dim: int, *, dtype: torch.dtype, device: str,
    seed: int | None = None,
) -> tuple[torch.Tensor, ...]:  # fmt: skip
    """reqs requests of `tokens` new tokens each, packed; q, k, v at unit scale (after the
    layer's q/k norms); a pool of 2 reqs + 1 fp32 states at unit scale, the requests' slots a
    random choice of them; every other request (the first, third...) continues a chunked
    prefill and reads its state, the others start from zero (their slots hold a freed
    request's stale state, which the kernel must not read); the slopes of SGLang's formula at
    the middle layer (factor 1 - 1/2 + 1e-5)."""
    gen = torch.Generator(device="cpu")
    gen.manual_seed(seed if seed is not None else int(torch.randint(0, 2**31 - 1, (1,))))
    length = reqs * tokens
    q = torch.randn(length, heads, head_dim, generator=gen)
    k = torch.randn(length, heads, head_dim, generator=gen)
    v = torch.randn(length, heads, head_dim, generator=gen)
    pool = 2 * reqs + 1
    state = torch.randn(pool, heads, head_dim, head_dim, generator=gen)
    slots = torch.randperm(pool, generator=gen)[:reqs].to(torch.int32)
    q_offsets = (torch.arange(reqs + 1) * tokens).to(torch.int32)
    has_state = torch.arange(reqs) % 2 == 0
    factor = 1 - LAYER_FRACTION + 1e-5
    slopes = torch.tensor([s * factor for s in sglang_slopes(heads)], dtype=torch.float32)
    return (
        q.to(dtype=dtype, device=device),
        k.to(dtype=dtype, device=device),
        v.to(dtype=dtype, device=device),
        state.to(device=device),
        slopes.to(device=device),
        q_offsets.to(device=device),
        slots.to(device=device),
        has_state.to(device=device),
    )


def _recurrence(
    q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, state: torch.Tensor,
    slopes: torch.Tensor, q_offsets: torch.Tensor, slots: torch.Tensor, has_state: torch.Tensor,
) -> tuple[torch.Tensor, torch.Tensor]:  # fmt: skip
    """Token by token, all requests at once (a request past its length keeps its state)."""
    length, heads, head_dim = q.shape
    starts = q_offsets[:-1].long()
    lengths = q_offsets.diff().long()
    slot = slots.long()
    keep = has_state.to(torch.float32)[:, None, None, None]
    s = state[slot].float() * keep  # [reqs, heads, dk, dv]
    decay = torch.exp(-slopes.float())[None, :, None, None]
    out = torch.zeros(length, heads, head_dim, dtype=torch.float32, device=q.device)
    scale = head_dim**-0.5
    for t in range(int(lengths.max())):
        live = t < lengths
        rows = (starts + t).clamp(max=length - 1)
        kt = k[rows].float()
        vt = v[rows].float()
        upd = s * decay + kt[..., :, None] * vt[..., None, :]
        s = torch.where(live[:, None, None, None], upd, s)
        ot = torch.einsum("rhk,rhkv->rhv", q[rows].float(), s) * scale
        out[rows[live]] = ot[live]
    final = state.clone()
    final[slot] = s
    return out.to(q.dtype), final


def reference(
    q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, state: torch.Tensor,
    slopes: torch.Tensor, q_offsets: torch.Tensor, slots: torch.Tensor, has_state: torch.Tensor,
) -> tuple[torch.Tensor, torch.Tensor]:  # fmt: skip
    return _recurrence(q, k, v, state, slopes, q_offsets, slots, has_state)


def torch_seg_la(
    q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, state: torch.Tensor,
    slopes: torch.Tensor, q_offsets: torch.Tensor, slots: torch.Tensor, has_state: torch.Tensor,
) -> tuple[torch.Tensor, torch.Tensor]:  # fmt: skip
    """The same recurrence as a loop of torch kernels over the tokens, in fp32 (the pool
    written in place, as the kernel does)."""
    out, final = _recurrence(q, k, v, state, slopes, q_offsets, slots, has_state)
    state.copy_(final)
    return out, state
