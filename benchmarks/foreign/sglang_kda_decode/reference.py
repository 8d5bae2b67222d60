"""Kimi Delta Attention's decode step (Kimi-Linear's KDA layers on a decode step in SGLang:
`fused_sigmoid_gating_delta_rule_update` with is_kda=True, as `KimiLinearAttnBackend.
forward_decode` calls it after the q, k and v short convolutions): inputs, fp32 reference,
torch baseline.

The batch is launched at its CUDA-graph size: `reqs` live requests, then `pad` padded rows
(SGLang's pad slot -1), one token each, packed.  q, k [1, rows, heads, dk] and v [1, rows,
heads, dv] in the dtype (Kimi-Linear's q, k and v heads are the same heads); a [rows, heads
* dk] is the forget gate's low-rank projection in the dtype (not yet activated: decode fuses
the gate into this kernel); b [1, rows, heads] is the beta projection in fp32 (the model
casts it); A_log [1, 1, heads, 1] and dt_bias [heads * dk] are the layer's fp32 parameters.
state is the layer's fp32 state pool [slots, heads, dk, dv] (SGLang's default mamba ssm
dtype, whatever the model's), updated in place; slots [rows] int32 names each row's slot, a
shuffled permutation of the pool for the live rows, -1 for the padded rows; cu_seqlens
[rows + 1] int32 is 0..rows.

Per row and head, with S (dk x dv, fp32) the slot's state (zero for a padded row):

    g = -exp(A_log) softplus(a + dt_bias)        a vector over the dk key channels
    beta = sigmoid(b);  q and k L2-normalised (eps 1e-6 under the root), q scaled by dk^-1/2
    S <- diag(exp(g)) S;  u = beta (v - S^T k);  S <- S + k u^T;  o = S^T q

and S is stored back to the slot (a padded row stores nothing).  The outputs: o [1, rows,
heads, dv] in the dtype and the pool."""

from __future__ import annotations

import math

import torch
import torch.nn.functional as F

SOFTPLUS_THRESHOLD = 20.0  # forward_decode's softplus_threshold (softplus_beta 1.0)


def make_inputs(
    reqs: int, pad: int, heads: int, dk: int, dv: int,
    *, dtype: torch.dtype, device: str, seed: int | None = None,
) -> tuple[torch.Tensor, ...]:  # fmt: skip
    """(q, k, v, a, b, A_log, dt_bias, state, slots, cu_seqlens), drawn on the device: q, k
    and v at unit scale in the dtype (the kernel L2-normalises q and k), the gate projection
    a and beta's b at unit scale; A_log as Kimi-Linear initialises it (log of 1..16) and
    dt_bias the inverse softplus of a dt in [1e-3, 0.1] per channel, so that the decays
    exp(g) are near 1 and differ channel by channel; the pool one fp32 slot per live row at
    0.1 scale (a decayed running sum), the live rows' slots a shuffled permutation of it, the
    padded rows' -1 after them (SGLang pads the graph's tail)."""
    gen = torch.Generator(device=device)
    gen.manual_seed(seed if seed is not None else int(torch.randint(0, 2**31 - 1, (1,))))
    rows = reqs + pad

    def draw(*shape: int) -> torch.Tensor:
        return torch.randn(*shape, generator=gen, device=device)

    q = draw(1, rows, heads, dk).to(dtype)
    k = draw(1, rows, heads, dk).to(dtype)
    v = draw(1, rows, heads, dv).to(dtype)
    a = draw(rows, heads * dk).to(dtype)
    b = draw(1, rows, heads)
    A_log = torch.log(1 + 15 * torch.rand(1, 1, heads, 1, generator=gen, device=device))
    dt = 1e-3 * torch.exp(torch.rand(heads * dk, generator=gen, device=device) * math.log(100.0))
    dt_bias = dt + torch.log(-torch.expm1(-dt))
    state = 0.1 * draw(reqs, heads, dk, dv)
    live = torch.randperm(reqs, generator=gen, device=device).to(torch.int32)
    slots = torch.cat([live, torch.full((pad,), -1, dtype=torch.int32, device=device)])
    cu_seqlens = torch.arange(rows + 1, dtype=torch.int32, device=device)
    return q, k, v, a, b, A_log, dt_bias, state, slots, cu_seqlens


def _step(
    q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, a: torch.Tensor, b: torch.Tensor,
    A_log: torch.Tensor, dt_bias: torch.Tensor, state: torch.Tensor, slots: torch.Tensor,
) -> tuple[torch.Tensor, torch.Tensor]:  # fmt: skip
    """All rows at once in fp32: the output in the dtype and the updated slots' states
    (rows with a slot only), with their pool indices."""
    _, rows, heads, dk = q.shape
    live = slots >= 0
    idx = slots.long().clamp_min(0)
    h = torch.where(live[:, None, None, None], state[idx].float(), 0.0)  # [rows, H, K, V]
    qf, kf = q[0].float(), k[0].float()
    qf = qf / torch.sqrt((qf * qf).sum(-1, keepdim=True) + 1e-6) * dk**-0.5
    kf = kf / torch.sqrt((kf * kf).sum(-1, keepdim=True) + 1e-6)
    x = a.float().view(rows, heads, dk) + dt_bias.float().view(heads, dk)
    g = -torch.exp(A_log.float().view(heads, 1)) * F.softplus(x, threshold=SOFTPLUS_THRESHOLD)
    beta = torch.sigmoid(b[0].float())  # [rows, H]
    h = h * torch.exp(g)[..., None]
    u = beta[..., None] * (v[0].float() - (h * kf[..., None]).sum(-2))
    h = h + kf[..., None] * u[..., None, :]
    o = (h * qf[..., None]).sum(-2)
    return o[None].to(q.dtype), h[live], slots[live].long()


def reference(
    q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, a: torch.Tensor, b: torch.Tensor,
    A_log: torch.Tensor, dt_bias: torch.Tensor, state: torch.Tensor, slots: torch.Tensor,
    cu_seqlens: torch.Tensor,
) -> tuple[torch.Tensor, torch.Tensor]:  # fmt: skip
    """In fp32: the per-channel gated, delta-corrected states and their read-out; a new pool
    (the input's unchanged) with the live rows' slots updated."""
    del cu_seqlens
    o, h, idx = _step(q, k, v, a, b, A_log, dt_bias, state, slots)
    new = state.clone()
    new[idx] = h.to(state.dtype)
    return o, new


def torch_kda_decode(
    q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, a: torch.Tensor, b: torch.Tensor,
    A_log: torch.Tensor, dt_bias: torch.Tensor, state: torch.Tensor, slots: torch.Tensor,
    cu_seqlens: torch.Tensor,
) -> tuple[torch.Tensor, torch.Tensor]:  # fmt: skip
    """The same by torch ops on the device: the slots gathered, the step in fp32 for all
    rows (the gate, the norms, the decay, the delta-rule update and the read-out as separate
    kernels), the live rows' states scattered back into the pool in place."""
    del cu_seqlens
    o, h, idx = _step(q, k, v, a, b, A_log, dt_bias, state, slots)
    state[idx] = h.to(state.dtype)
    return o, state
