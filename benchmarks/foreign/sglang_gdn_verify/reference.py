"""The gated delta rule verifying draft tokens (Qwen3-Next's linear-attention layers in a
target-verify pass of speculative decoding: SGLang's `fused_recurrent_gated_delta_rule_update`
with the hybrid GDN backend's intermediate-state cache, one draft per step): inputs, fp32
reference, torch baseline.

`reqs` requests of `step` draft tokens each, packed: q, k [1, tokens, heads, dk], v [1,
tokens, vheads, dv], the gates g (log decay) and beta [1, tokens, vheads] in fp32.  Value
head h reads q/k head h // (vheads / heads).  Per request and value head, with S (dk x dv,
fp32) read from the request's slot of the state pool, per draft token t in order, q and k
L2-normalised (eps 1e-6 under the root) and q scaled by dk^-1/2:

    S <- exp(g_t) S;  u = beta_t (v_t - S^T k_t);  S <- S + k_t u^T;  o_t = S^T q_t;
    the request's cache entry, step t, <- S.

Outputs: o [1, tokens, vheads, dv] in the inputs' dtype and the cache [entries, step,
vheads, dk, dv] in fp32 (its other entries unchanged; the pool is only read: the verifier
commits the state of the accepted prefix from the cache afterwards)."""

from __future__ import annotations

import torch


def make_inputs(
    reqs: int, step: int, heads: int, vheads: int, dk: int, dv: int, *, dtype: torch.dtype,
    device: str, seed: int | None = None,
) -> tuple[torch.Tensor, ...]:  # fmt: skip
    """(q, k, v, g, beta, pool, slots, cache, entries, cu_seqlens), drawn on the device: q, k
    and v at unit scale in the dtype (the kernel L2-normalises q and k); g = log decay in
    (-0.5, 0) and beta = sigmoid(randn), both fp32 as SGLang's fused_gdn_gating writes them;
    a pool of 2 reqs + 1 fp32 states at unit scale, the requests' slots a random choice of
    them (int32); a zeroed fp32 cache of reqs + 1 entries, the requests' entries 0 .. reqs - 1
    as SGLang passes them (int32); the int32 bounds of `reqs` packed runs of `step` tokens."""
    gen = torch.Generator(device=device)
    gen.manual_seed(seed if seed is not None else int(torch.randint(0, 2**31 - 1, (1,))))
    tokens = reqs * step

    def randn(*shape: int) -> torch.Tensor:
        return torch.randn(*shape, generator=gen, device=device)

    q = randn(1, tokens, heads, dk).to(dtype)
    k = randn(1, tokens, heads, dk).to(dtype)
    v = randn(1, tokens, vheads, dv).to(dtype)
    g = -0.5 * torch.rand(1, tokens, vheads, generator=gen, device=device)
    beta = torch.sigmoid(randn(1, tokens, vheads))
    pool_size = 2 * reqs + 1
    pool = randn(pool_size, vheads, dk, dv)
    slots = torch.randperm(pool_size, generator=gen, device=device)[:reqs].to(torch.int32)
    cache = torch.zeros(reqs + 1, step, vheads, dk, dv, device=device)
    entries = torch.arange(reqs, dtype=torch.int32, device=device)
    cu_seqlens = torch.arange(0, tokens + 1, step, dtype=torch.int32, device=device)
    return q, k, v, g, beta, pool, slots, cache, entries, cu_seqlens


def _verify(
    q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, g: torch.Tensor, beta: torch.Tensor,
    pool: torch.Tensor, slots: torch.Tensor, cache: torch.Tensor, entries: torch.Tensor,
    cu_seqlens: torch.Tensor,
) -> tuple[torch.Tensor, torch.Tensor]:  # fmt: skip
    """Step by step, all requests at once, in fp32; returns the output and a new cache."""
    _, tokens, heads, dk = q.shape
    vheads, dv = v.shape[2], v.shape[3]
    reqs = slots.shape[0]
    step = tokens // reqs
    rep = vheads // heads

    def per_request(x: torch.Tensor) -> torch.Tensor:  # [1, tokens, H, D] -> [reqs, step, H, D]
        return x.float().view(reqs, step, *x.shape[2:])

    qf = per_request(q).repeat_interleave(rep, dim=2)
    kf = per_request(k).repeat_interleave(rep, dim=2)
    qf = qf / torch.sqrt((qf * qf).sum(-1, keepdim=True) + 1e-6) * dk**-0.5
    kf = kf / torch.sqrt((kf * kf).sum(-1, keepdim=True) + 1e-6)
    vf, gf = per_request(v), per_request(g)
    bf = beta.float().view(reqs, step, vheads)
    s = pool[slots.long()].float()  # [reqs, vheads, dk, dv]
    out = torch.empty(reqs, step, vheads, dv, dtype=torch.float32, device=q.device)
    new_cache = cache.clone()
    rows = entries.long()
    for t in range(step):
        s = s * torch.exp(gf[:, t])[..., None, None]
        u = (vf[:, t] - torch.einsum("rhkv,rhk->rhv", s, kf[:, t])) * bf[:, t, :, None]
        s = s + kf[:, t, :, :, None] * u[:, :, None, :]
        out[:, t] = torch.einsum("rhkv,rhk->rhv", s, qf[:, t])
        new_cache[rows, t] = s.to(cache.dtype)
    return out.view(1, tokens, vheads, dv).to(v.dtype), new_cache


def reference(*inputs: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    return _verify(*inputs)


def torch_gdn_verify(*inputs: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """The same recurrence as a loop of torch kernels over the draft steps, in fp32 (the
    cache written in place, as the kernel does)."""
    out, new_cache = _verify(*inputs)
    cache = inputs[7]
    cache.copy_(new_cache)
    return out, cache
