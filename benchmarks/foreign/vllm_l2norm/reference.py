"""FLA's L2 norm as vLLM ships it (`l2norm_fwd` on the gated delta rule's q or k before the
chunked prefill): inputs, fp32 reference, torch baseline.

x is [tokens, heads, head_dim] in the spec's dtype; every head vector is divided by its
Euclidean norm, sqrt(sum x^2 + eps) with eps 1e-6 (no weight, no mean), in fp32, and the
output has x's dtype and shape."""

from __future__ import annotations

import torch

EPS = 1e-6  # l2norm_fwd's default, as vLLM's gated-delta-net layers call it


def make_inputs(
    tokens: int, heads: int, head_dim: int, *, dtype: torch.dtype, device: str,
    seed: int | None = None,
) -> tuple[torch.Tensor]:  # fmt: skip
    """Unit-normal q (or k) heads, as the short convolution and SiLU leave them roughly."""
    gen = torch.Generator(device="cpu")
    gen.manual_seed(seed if seed is not None else int(torch.randint(0, 2**31 - 1, (1,))))
    x = torch.randn(tokens, heads, head_dim, generator=gen)
    return (x.to(dtype=dtype, device=device),)


def reference(x: torch.Tensor) -> torch.Tensor:
    xf = x.double()
    return (xf / torch.sqrt((xf * xf).sum(-1, keepdim=True) + EPS)).to(x.dtype)


def torch_l2norm(x: torch.Tensor) -> torch.Tensor:
    """The same by torch ops in fp32: the squares summed per head, rsqrt, scaled, cast."""
    xf = x.float()
    return (xf * torch.rsqrt((xf * xf).sum(-1, keepdim=True) + EPS)).to(x.dtype)
