"""vLLM's fused sigmoid-gating gated delta rule decode step (Qwen3-Next's and Qwen3.5's
Gated DeltaNet layers on a decode step, `fused_sigmoid_gating_delta_rule_update` as
`QwenGatedDeltaNet` calls it for the non-speculative decodes): inputs, reference, torch
baseline.

q and k are [1, seqs, heads, dk], v is [1, seqs, vheads, dv] (one token per sequence,
packed, vLLM's cu_seqlens form); a and b are [seqs, vheads] (the gate and beta
projections); A_log and dt_bias are [vheads] (the layer's parameters, fp32).  state is the
layer's state pool [seqs + 1, vheads, dv, dk] in the dtype (vLLM's "auto" mamba cache
dtype; slot 0 is the null block), updated in place; slots [seqs] int32 are each sequence's
slot, a shuffled permutation of 1..seqs; cu_seqlens [seqs + 1] int32 is 0..seqs.  Per
(sequence, value head): g = -exp(A_log) softplus(a + dt_bias), beta = sigmoid(b), q and k
L2-normalized and q scaled by dk^-1/2, h = h exp(g), v' = beta (v - h k), h += v' k^T,
o = h q.  The outputs: o [1, seqs, vheads, dv] in the dtype and the pool."""

from __future__ import annotations

import torch
import torch.nn.functional as F


def make_inputs(
    seqs: int, heads: int, vheads: int, dk: int, dv: int,
    *, dtype: torch.dtype, device: str, seed: int | None = None,
) -> tuple[torch.Tensor, ...]:  # fmt: skip
    """Values drawn on the device; A_log as Mamba initializes it (log of 1..16), dt_bias the
    inverse softplus of a dt in [1e-3, 0.1], the state small (a decayed running sum)."""
    if vheads % heads:
        raise ValueError("heads must divide vheads")
    gen = torch.Generator(device=device)
    gen.manual_seed(seed if seed is not None else int(torch.randint(0, 2**31 - 1, (1,))))

    def draw(*shape: int, dt: torch.dtype = dtype) -> torch.Tensor:
        return torch.randn(*shape, generator=gen, device=device, dtype=dt)

    q, k, v = draw(1, seqs, heads, dk), draw(1, seqs, heads, dk), draw(1, seqs, vheads, dv)
    a, b = draw(seqs, vheads), draw(seqs, vheads)
    u = torch.rand(vheads, generator=gen, device=device)
    A_log = torch.log(1 + 15 * u)
    dt = (
        torch.exp(
            torch.rand(vheads, generator=gen, device=device) * (torch.log(torch.tensor(100.0)))
        )
        * 1e-3
    )
    dt_bias = dt + torch.log(-torch.expm1(-dt))
    state = (0.1 * draw(seqs + 1, vheads, dv, dk, dt=torch.float32)).to(dtype)
    slots = (torch.randperm(seqs, generator=gen, device=device) + 1).to(torch.int32)
    cu = torch.arange(seqs + 1, dtype=torch.int32, device=device)
    return q, k, v, a, b, A_log, dt_bias, state, slots, cu


def _step(
    q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, a: torch.Tensor, b: torch.Tensor,
    A_log: torch.Tensor, dt_bias: torch.Tensor, state: torch.Tensor, slots: torch.Tensor,
) -> tuple[torch.Tensor, torch.Tensor]:  # fmt: skip
    heads, vheads, dk = q.shape[2], v.shape[2], q.shape[3]
    group = vheads // heads
    idx = slots.long()
    h = state[idx].float()  # [n, HV, V, K]
    qf = F.normalize(q[0].float(), dim=-1, eps=1e-6) * dk**-0.5
    kf = F.normalize(k[0].float(), dim=-1, eps=1e-6)
    qf = qf.repeat_interleave(group, dim=1)  # [n, HV, K]
    kf = kf.repeat_interleave(group, dim=1)
    g = -torch.exp(A_log.float()) * F.softplus(a.float() + dt_bias.float(), threshold=20.0)
    beta = torch.sigmoid(b.float())
    h = h * torch.exp(g)[..., None, None]
    vn = beta[..., None] * (v[0].float() - (h * kf[:, :, None, :]).sum(-1))
    h = h + vn[..., None] * kf[:, :, None, :]
    o = (h * qf[:, :, None, :]).sum(-1)
    new = state.clone()
    new[idx] = h.to(state.dtype)
    return o[None].to(q.dtype), new


def reference(
    q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, a: torch.Tensor, b: torch.Tensor,
    A_log: torch.Tensor, dt_bias: torch.Tensor, state: torch.Tensor, slots: torch.Tensor,
    cu_seqlens: torch.Tensor,
) -> tuple[torch.Tensor, torch.Tensor]:  # fmt: skip
    """In fp32 (F.normalize's eps differs from the kernel's rsqrt(sum + 1e-6) only on
    near-zero rows): the gated, delta-corrected state and its read-out, the state rounded
    to the pool's dtype when stored."""
    del cu_seqlens
    return _step(q, k, v, a, b, A_log, dt_bias, state, slots)


def torch_gdn_decode(
    q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, a: torch.Tensor, b: torch.Tensor,
    A_log: torch.Tensor, dt_bias: torch.Tensor, state: torch.Tensor, slots: torch.Tensor,
    cu_seqlens: torch.Tensor,
) -> tuple[torch.Tensor, torch.Tensor]:  # fmt: skip
    """The same by torch ops on the device: the slots gathered, the step in fp32, the
    states scattered back in place."""
    del cu_seqlens
    o, new = _step(q, k, v, a, b, A_log, dt_bias, state, slots)
    idx = slots.long()
    state[idx] = new[idx]
    return o, state
