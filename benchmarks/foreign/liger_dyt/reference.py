"""Dynamic Tanh (DyT, "Transformers without Normalization", Zhu et al. 2025) for Liger's
kernel: inputs, fp32 reference, torch baseline.  y = tanh(alpha * x) * gamma + beta per
element of x [rows, hidden], with one learnt scalar alpha and per-channel gamma and beta:
the drop-in replacement for a transformer's norm layers."""

from __future__ import annotations

import torch

ALPHA_INIT = 0.5  # the paper's default initial alpha for LLMs' attention norms


def make_inputs(
    rows: int, hidden: int, *, dtype: torch.dtype, device: str, seed: int | None = None
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor]:
    """x [rows, hidden], alpha [1], gamma [hidden], beta [hidden] (trained-looking: gamma
    near 1, beta near 0), all in the model dtype."""
    gen = torch.Generator(device="cpu")
    gen.manual_seed(seed if seed is not None else int(torch.randint(0, 2**31 - 1, (1,))))
    x = 2.0 * torch.randn(rows, hidden, generator=gen)
    alpha = torch.tensor([ALPHA_INIT]) + 0.05 * torch.randn(1, generator=gen)
    gamma = 1.0 + 0.1 * torch.randn(hidden, generator=gen)
    beta = 0.1 * torch.randn(hidden, generator=gen)
    return tuple(t.to(dtype=dtype, device=device) for t in (x, alpha, gamma, beta))  # type: ignore[return-value]


def reference(
    x: torch.Tensor, alpha: torch.Tensor, gamma: torch.Tensor, beta: torch.Tensor
) -> torch.Tensor:
    y = torch.tanh(alpha.float() * x.float()) * gamma.float() + beta.float()
    return y.to(x.dtype)


def torch_dyt(
    x: torch.Tensor, alpha: torch.Tensor, gamma: torch.Tensor, beta: torch.Tensor
) -> torch.Tensor:
    """The paper's DyT module in plain torch, in the input dtype (several element-wise kernels)."""
    return torch.tanh(alpha * x) * gamma + beta
