"""Squared ReLU (Primer, So et al. 2021; the `relu2` activation of NVIDIA's Nemotron models)
for Liger's kernel: inputs, fp32 reference, torch baseline.  y = max(x, 0)^2 per element of
x [rows, width], the MLP's up-projection."""

from __future__ import annotations

import torch
import torch.nn.functional as F


def make_inputs(
    rows: int, width: int, *, dtype: torch.dtype, device: str, seed: int | None = None
) -> tuple[torch.Tensor]:
    gen = torch.Generator(device="cpu")
    gen.manual_seed(seed if seed is not None else int(torch.randint(0, 2**31 - 1, (1,))))
    return (torch.randn(rows, width, generator=gen).to(dtype=dtype, device=device),)


def reference(x: torch.Tensor) -> torch.Tensor:
    return torch.square(torch.relu(x.float())).to(x.dtype)


def torch_relu_squared(x: torch.Tensor) -> torch.Tensor:
    """HF's ReLUSquaredActivation in the input dtype (a relu kernel, then a square kernel)."""
    return torch.square(F.relu(x))
