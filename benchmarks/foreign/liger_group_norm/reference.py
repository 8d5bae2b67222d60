"""GroupNorm forward for Liger's kernel: inputs, fp32 reference, torch baseline.  x is
[n, c, hw] (a feature map with its spatial dimensions flattened), w and b [c]."""

from __future__ import annotations

import torch
import torch.nn.functional as F

EPS = 1e-5


def make_inputs(
    n: int, c: int, hw: int, groups: int, *, dtype: torch.dtype, device: str,
    seed: int | None = None,
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor, int, float]:  # fmt: skip
    gen = torch.Generator(device="cpu")
    gen.manual_seed(seed if seed is not None else int(torch.randint(0, 2**31 - 1, (1,))))
    x = 0.5 + 1.5 * torch.randn(n, c, hw, generator=gen)
    w = 1.0 + 0.1 * torch.randn(c, generator=gen)
    b = 0.1 * torch.randn(c, generator=gen)
    return (*(t.to(dtype=dtype, device=device) for t in (x, w, b)), groups, EPS)


def reference(
    x: torch.Tensor, w: torch.Tensor, b: torch.Tensor, groups: int, eps: float
) -> torch.Tensor:
    return F.group_norm(x.float(), groups, w.float(), b.float(), eps).to(x.dtype)


def torch_group_norm(
    x: torch.Tensor, w: torch.Tensor, b: torch.Tensor, groups: int, eps: float
) -> torch.Tensor:
    return F.group_norm(x, groups, w, b, eps)
