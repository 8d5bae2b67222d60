"""The gate and up projections of a SwiGLU MLP with the SwiGLU applied, for Liger's fused
kernel: inputs, fp32 reference, torch baseline.

x [batch, seq, dim] in the model dtype, the gate and up weights [hidden, dim] each (as
nn.Linear holds them: LigerMLP passes gate_proj.weight and up_proj.weight); the output is
silu(x @ gate^T) * (x @ up^T), [batch, seq, hidden], in the model dtype (the down
projection's input)."""

from __future__ import annotations

import torch
import torch.nn.functional as F


def make_inputs(
    batch: int,
    seq: int,
    dim: int,
    hidden: int,
    *,
    dtype: torch.dtype,
    device: str,
    seed: int | None = None,
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """randn activations and weights at 1/sqrt(dim) (unit-scale projections), drawn on the
    target device (the large trial's weights are 117 M values each)."""
    gen = torch.Generator(device=device)
    gen.manual_seed(seed if seed is not None else int(torch.randint(0, 2**31 - 1, (1,))))
    x = torch.randn(batch, seq, dim, generator=gen, device=device, dtype=dtype)
    gate = torch.randn(hidden, dim, generator=gen, device=device, dtype=dtype)
    up = torch.randn(hidden, dim, generator=gen, device=device, dtype=dtype)
    gate.mul_(dim**-0.5)
    up.mul_(dim**-0.5)
    return x, gate, up


def reference(x: torch.Tensor, gate: torch.Tensor, up: torch.Tensor) -> torch.Tensor:
    x32 = x.float()
    return (F.silu(x32 @ gate.float().T) * (x32 @ up.float().T)).to(x.dtype)


def torch_mlp_gate_up(x: torch.Tensor, gate: torch.Tensor, up: torch.Tensor) -> torch.Tensor:
    """HF's LlamaMLP up to the down projection: two cuBLAS GEMMs, SiLU and a multiply."""
    return F.silu(F.linear(x, gate)) * F.linear(x, up)
