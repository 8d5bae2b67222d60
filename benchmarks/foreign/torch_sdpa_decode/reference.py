"""Multi-head attention decode through torch's fused scaled_dot_product_attention: inputs,
fp32 reference, and the naive matmul-softmax-matmul as the baseline."""

from __future__ import annotations

import torch

HEAD_DIM = 128


def make_inputs(
    b: int, h: int, t: int, *, dtype: torch.dtype, device: str, seed: int | None = None
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor, float]:
    """q [b, h, 1, 128], k and v [b, h, t, 128], the softmax scale 1/sqrt(128)."""
    gen = torch.Generator(device="cpu")
    gen.manual_seed(seed if seed is not None else int(torch.randint(0, 2**31 - 1, (1,))))
    q, k, v = (torch.randn(b, h, n, HEAD_DIM, generator=gen) for n in (1, t, t))
    return (*(x.to(dtype=dtype, device=device) for x in (q, k, v)), HEAD_DIM**-0.5)


def reference(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, scale: float) -> torch.Tensor:
    p = torch.softmax((q.float() @ k.float().transpose(-1, -2)) * scale, dim=-1)
    return (p @ v.float()).to(q.dtype)


def naive(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, scale: float) -> torch.Tensor:
    """matmul, scale, fp32 softmax, cast, matmul: what a model file without SDPA writes."""
    scores = torch.matmul(q, k.transpose(-1, -2)) * scale
    return torch.matmul(torch.softmax(scores.float(), dim=-1).to(q.dtype), v)
