"""DyT (Dynamic Tanh, Zhu et al., "Transformers without Normalization", 2025): inputs, the
float32 reference and the plain-torch baseline.

``y = tanh(alpha * x) * gamma + beta`` per element of ``x [rows, hidden]``, with one learnt
scalar ``alpha`` and per-channel ``gamma`` and ``beta``: the element-wise layer that replaces
a transformer's norm.  Every version has the signature ``dyt(x, alpha, gamma, beta) -> y``.
"""

from __future__ import annotations

from collections.abc import Mapping

import torch

ALPHA = 0.5  # the paper's initial alpha for the attention-side norms of an LLM


def check_inputs(
    x: torch.Tensor, alpha: torch.Tensor, gamma: torch.Tensor, beta: torch.Tensor
) -> None:
    if x.dim() != 2 or not x.is_contiguous():
        raise ValueError(f"x must be a contiguous [rows, hidden] tensor, got {tuple(x.shape)}")
    hidden = x.shape[1]
    if alpha.numel() != 1 or gamma.shape != (hidden,) or beta.shape != (hidden,):
        raise ValueError(
            f"alpha must hold one value and gamma, beta {hidden}; got {alpha.numel()}, "
            f"{tuple(gamma.shape)}, {tuple(beta.shape)}"
        )


def make_inputs(
    dims: Mapping[str, int], *, dtype: torch.dtype, device: str, seed: int | None = None
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor]:
    """x with activations of a few units (so tanh is not saturated everywhere), alpha near
    its initial value, gamma near 1 and beta near 0 as after training."""
    gen = torch.Generator(device="cpu")
    gen.manual_seed(seed if seed is not None else int(torch.randint(0, 2**31 - 1, (1,))))
    rows, hidden = dims["rows"], dims["hidden"]
    x = 2.0 * torch.randn(rows, hidden, generator=gen)
    alpha = ALPHA + 0.05 * torch.randn(1, generator=gen)
    gamma = 1.0 + 0.1 * torch.randn(hidden, generator=gen)
    beta = 0.1 * torch.randn(hidden, generator=gen)
    x, alpha, gamma, beta = (t.to(dtype=dtype, device=device) for t in (x, alpha, gamma, beta))
    return x, alpha, gamma, beta


def reference(
    x: torch.Tensor, alpha: torch.Tensor, gamma: torch.Tensor, beta: torch.Tensor
) -> torch.Tensor:
    """float32 reference; the result in x's dtype."""
    check_inputs(x, alpha, gamma, beta)
    y = torch.tanh(alpha.float() * x.float()) * gamma.float() + beta.float()
    return y.to(x.dtype)


def torch_eager(
    x: torch.Tensor, alpha: torch.Tensor, gamma: torch.Tensor, beta: torch.Tensor
) -> torch.Tensor:
    """The layer as a user writes it in torch, in x's dtype (four element-wise kernels)."""
    check_inputs(x, alpha, gamma, beta)
    return torch.tanh(alpha * x) * gamma + beta
