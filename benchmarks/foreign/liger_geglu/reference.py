"""GEGLU forward (tanh GELU) for Liger's kernel: inputs, fp32 reference, torch baseline."""

from __future__ import annotations

import torch
import torch.nn.functional as F


def make_inputs(
    rows: int, hidden: int, *, dtype: torch.dtype, device: str, seed: int | None = None
) -> tuple[torch.Tensor, torch.Tensor]:
    """The gate and up projections' outputs a, b [rows, hidden]."""
    gen = torch.Generator(device="cpu")
    gen.manual_seed(seed if seed is not None else int(torch.randint(0, 2**31 - 1, (1,))))
    a = torch.randn(rows, hidden, generator=gen)
    b = torch.randn(rows, hidden, generator=gen)
    return a.to(dtype=dtype, device=device), b.to(dtype=dtype, device=device)


def reference(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    return (F.gelu(a.float(), approximate="tanh") * b.float()).to(a.dtype)


def torch_geglu(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    """HF Gemma's MLP activation: gelu_pytorch_tanh(gate) * up in the input dtype (two kernels)."""
    return F.gelu(a, approximate="tanh") * b
