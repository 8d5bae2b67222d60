"""SGLang's segmented linear attention verifying draft tokens (Ling/Ring linear models'
`seg_la_fwd` with the hybrid linear backend's intermediate-state cache, speculative decoding
with one draft per step): inputs, fp32 reference, torch baseline.

`reqs` requests of `step` draft tokens each, packed.  Per request and head, with the head's
slope lam and the state S (head_dim x head_dim, fp32) read from the request's slot of the
pool, per draft token i in order: S <- exp(-lam) S + k_i^T v_i;  o_i = (q_i S) / sqrt(head_dim);
the cache entry of the request, step i, <- S.  Outputs: o [tokens, heads, head_dim] in the
inputs' dtype and the cache (the other entries unchanged; the pool is not written)."""

from __future__ import annotations

import math

import torch

LAYER_FRACTION = 0.5  # the slopes of a layer halfway through the model


def sglang_slopes(heads: int) -> list[float]:
    """The ALiBi-style slopes of SGLang's `_build_slope_tensor`, before the per-layer
    factor."""

    def power_of_2(n: int) -> list[float]:
        start = 2 ** (-(2 ** -(math.log2(n) - 3)))
        return [start * start**i for i in range(n)]

    if math.log2(heads).is_integer():
        return power_of_2(heads)
    closest = 2 ** math.floor(math.log2(heads))
    return power_of_2(closest) + sglang_slopes(2 * closest)[0::2][: heads - closest]


def make_inputs(
    reqs: int, step: int, heads: int, head_dim: int, *, dtype: torch.dtype, device: str,
    seed: int | None = None,
) -> tuple[torch.Tensor, ...]:  # fmt: skip
    """(q, k, v, state pool, cache, slopes, slots, cache_slots), drawn on the device: q, k,
    v at unit scale (after the layer's q/k norms); a pool of 2 reqs + 1 fp32 states at unit
    scale, the requests' slots a random choice of them; a zeroed fp32 cache of reqs + 1
    entries [entries, step, heads, head_dim, head_dim], the requests' entries a random
    permutation of them; the slopes of SGLang's formula at the middle layer."""
    gen = torch.Generator(device=device)
    gen.manual_seed(seed if seed is not None else int(torch.randint(0, 2**31 - 1, (1,))))
    length = reqs * step
    shape = (length, heads, head_dim)
    q = torch.randn(shape, generator=gen, device=device).to(dtype)
    k = torch.randn(shape, generator=gen, device=device).to(dtype)
    v = torch.randn(shape, generator=gen, device=device).to(dtype)
    pool = 2 * reqs + 1
    state = torch.randn(pool, heads, head_dim, head_dim, generator=gen, device=device)
    caches = torch.zeros(reqs + 1, step, heads, head_dim, head_dim, device=device)
    slots = torch.randperm(pool, generator=gen, device=device)[:reqs].to(torch.int32)
    cache_slots = torch.randperm(reqs + 1, generator=gen, device=device)[:reqs].to(torch.int32)
    factor = 1 - LAYER_FRACTION + 1e-5
    slopes = torch.tensor([s * factor for s in sglang_slopes(heads)], dtype=torch.float32)
    return q, k, v, state, caches, slopes.to(device), slots, cache_slots


def _verify(
    q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, state: torch.Tensor,
    caches: torch.Tensor, slopes: torch.Tensor, slots: torch.Tensor, cache_slots: torch.Tensor,
) -> tuple[torch.Tensor, torch.Tensor]:  # fmt: skip
    """Step by step, all requests at once, in fp32."""
    length, heads, head_dim = q.shape
    reqs = slots.shape[0]
    step = length // reqs
    s = state[slots.long()].float()  # [reqs, heads, dk, dv]
    decay = torch.exp(-slopes.float())[None, :, None, None]
    qs = q.float().view(reqs, step, heads, head_dim) * head_dim**-0.5
    ks = k.float().view(reqs, step, heads, head_dim)
    vs = v.float().view(reqs, step, heads, head_dim)
    out = torch.empty(reqs, step, heads, head_dim, dtype=torch.float32, device=q.device)
    new_caches = caches.clone()
    entries = cache_slots.long()
    for i in range(step):
        s = s * decay + ks[:, i, :, :, None] * vs[:, i, :, None, :]
        out[:, i] = torch.einsum("rhk,rhkv->rhv", qs[:, i], s)
        new_caches[entries, i] = s.to(caches.dtype)
    return out.view(length, heads, head_dim).to(q.dtype), new_caches


def reference(*inputs: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    return _verify(*inputs)


def torch_seg_la_mtp(*inputs: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """The same recurrence as a loop of torch kernels over the draft steps, in fp32 (the
    cache written in place, as the kernel does)."""
    out, new_caches = _verify(*inputs)
    caches = inputs[4]
    caches.copy_(new_caches)
    return out, caches
