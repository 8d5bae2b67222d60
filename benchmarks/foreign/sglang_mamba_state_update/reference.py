"""A Mamba-2 decode step's SSM state update (SGLang's `selective_state_update` with per-head
A, dt, dt_bias and D, dt through softplus, the output gated by silu(z)): inputs, fp32
reference, torch baseline.  Per head h (group g = h // (nheads / ngroups)):
dt' = softplus(dt + dt_bias);  S <- exp(A dt') S + dt' x B^T;  y = S C + D x;  y *= silu(z).
Outputs: y [batch, nheads, dim] in the inputs' dtype and the updated state (its dtype)."""

from __future__ import annotations

import torch


def make_inputs(
    batch: int, nheads: int, dim: int, dstate: int, ngroups: int, *, dtype: torch.dtype,
    device: str, seed: int | None = None,
) -> tuple[torch.Tensor, ...]:  # fmt: skip
    """A state at unit scale in the inputs' dtype (SGLang keeps it so unless told fp32),
    x, z, B, C at unit scale, A = -exp(uniform) as Mamba-2 stores it, dt around zero."""
    gen = torch.Generator(device="cpu")
    gen.manual_seed(seed if seed is not None else int(torch.randint(0, 2**31 - 1, (1,))))
    state = torch.randn(batch, nheads, dim, dstate, generator=gen)
    x = torch.randn(batch, nheads, dim, generator=gen)
    dt = torch.randn(batch, nheads, generator=gen)
    dt_bias = 0.5 * torch.randn(nheads, generator=gen)
    a = -torch.exp(torch.rand(nheads, generator=gen) * 2.0)
    b = torch.randn(batch, ngroups, dstate, generator=gen)
    c = torch.randn(batch, ngroups, dstate, generator=gen)
    d = torch.randn(nheads, generator=gen)
    z = torch.randn(batch, nheads, dim, generator=gen)
    to = dict(dtype=dtype, device=device)
    return (
        state.to(**to), x.to(**to), dt.to(**to), dt_bias.to(device=device, dtype=torch.float32),
        a.to(device=device, dtype=torch.float32), b.to(**to), c.to(**to),
        d.to(device=device, dtype=torch.float32), z.to(**to),
    )  # fmt: skip


def _step(
    state: torch.Tensor, x: torch.Tensor, dt: torch.Tensor, dt_bias: torch.Tensor,
    a: torch.Tensor, b: torch.Tensor, c: torch.Tensor, d: torch.Tensor, z: torch.Tensor,
) -> tuple[torch.Tensor, torch.Tensor]:  # fmt: skip
    rep = state.shape[1] // b.shape[1]
    f = torch.float32
    dtp = torch.nn.functional.softplus(dt.to(f) + dt_bias.to(f))  # [batch, nheads]
    da = torch.exp(a.to(f) * dtp)[..., None, None]
    bh = b.to(f).repeat_interleave(rep, dim=1)  # [batch, nheads, dstate]
    ch = c.to(f).repeat_interleave(rep, dim=1)
    new = state.to(f) * da + (dtp[..., None] * x.to(f))[..., None] * bh[:, :, None, :]
    y = (new * ch[:, :, None, :]).sum(-1) + d.to(f)[:, None] * x.to(f)
    y = y * torch.nn.functional.silu(z.to(f))
    return y.to(x.dtype), new.to(state.dtype)


def reference(*inputs: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    return _step(*inputs)


def torch_state_update(*inputs: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """The same step in torch's element-wise kernels (fp32), the state written back in place."""
    y, new = _step(*inputs)
    inputs[0].copy_(new)
    return y, inputs[0]
