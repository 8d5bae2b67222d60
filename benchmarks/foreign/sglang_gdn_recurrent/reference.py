"""The gated delta rule recurrence of Qwen3-Next's linear attention (SGLang's
`fused_recurrent_gated_delta_rule` with q and k L2-normalised in the kernel): inputs, fp32
reference, torch baseline.  Per value head a K x V state S, per token t:
S <- exp(g_t) S;  u = beta_t (v_t - S^T k_t);  S <- S + k_t u^T;  o_t = S^T (q_t / sqrt(K)).
Outputs: o [batch, T, HV, V] in the inputs' dtype and the final S in fp32."""

from __future__ import annotations

import torch


def make_inputs(
    batch: int, seq: int, heads: int, vheads: int, dk: int, dv: int, *, dtype: torch.dtype,
    device: str, seed: int | None = None,
) -> tuple[torch.Tensor, ...]:  # fmt: skip
    """q, k, v at unit scale; g = log-decay in (-0.5, 0), beta = sigmoid(randn); an initial
    state at unit scale (a decode continues a sequence)."""
    gen = torch.Generator(device="cpu")
    gen.manual_seed(seed if seed is not None else int(torch.randint(0, 2**31 - 1, (1,))))
    q = torch.randn(batch, seq, heads, dk, generator=gen)
    k = torch.randn(batch, seq, heads, dk, generator=gen)
    v = torch.randn(batch, seq, vheads, dv, generator=gen)
    g = -0.5 * torch.rand(batch, seq, vheads, generator=gen)
    beta = torch.sigmoid(torch.randn(batch, seq, vheads, generator=gen))
    h0 = torch.randn(batch, vheads, dk, dv, generator=gen)
    return (
        q.to(dtype=dtype, device=device),
        k.to(dtype=dtype, device=device),
        v.to(dtype=dtype, device=device),
        g.to(dtype=dtype, device=device),
        beta.to(dtype=dtype, device=device),
        h0.to(device=device),
    )


def _recurrence(
    q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, g: torch.Tensor, beta: torch.Tensor,
    h0: torch.Tensor, acc: torch.dtype,
) -> tuple[torch.Tensor, torch.Tensor]:  # fmt: skip
    _, seq, heads, dk = k.shape
    rep = v.shape[2] // heads
    qf = q.to(acc).repeat_interleave(rep, dim=2)
    kf = k.to(acc).repeat_interleave(rep, dim=2)
    qf = qf / torch.sqrt((qf * qf).sum(-1, keepdim=True) + 1e-6) * dk**-0.5
    kf = kf / torch.sqrt((kf * kf).sum(-1, keepdim=True) + 1e-6)
    s = h0.to(acc).clone()
    outs = []
    for t in range(seq):
        s = s * torch.exp(g[:, t].to(acc))[..., None, None]
        u = (v[:, t].to(acc) - torch.einsum("bhkv,bhk->bhv", s, kf[:, t])) * beta[:, t].to(acc)[
            ..., None
        ]
        s = s + kf[:, t][..., :, None] * u[..., None, :]
        outs.append(torch.einsum("bhkv,bhk->bhv", s, qf[:, t]))
    return torch.stack(outs, dim=1).to(v.dtype), s.float()


def reference(
    q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, g: torch.Tensor, beta: torch.Tensor,
    h0: torch.Tensor,
) -> tuple[torch.Tensor, torch.Tensor]:  # fmt: skip
    return _recurrence(q, k, v, g, beta, h0, torch.float32)


def torch_gdn_recurrent(
    q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, g: torch.Tensor, beta: torch.Tensor,
    h0: torch.Tensor,
) -> tuple[torch.Tensor, torch.Tensor]:  # fmt: skip
    """The same recurrence as a loop of torch kernels over the tokens, in fp32."""
    return _recurrence(q, k, v, g, beta, h0, torch.float32)
