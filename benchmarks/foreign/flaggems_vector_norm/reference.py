"""FlagGems' whole-tensor L2 norm (`vector_norm(x, 2)` over every dimension, the
`l2_norm_kernel_1` / `l2_norm_kernel_2` path): inputs, reference, torch baseline.

x is one weight's gradient, [rows, cols] in the spec's dtype, as gradient-norm clipping
(`clip_grad_norm_` without foreach) or a layer-wise optimizer (LAMB's trust ratio) asks for
its norm.  The output is a 0-d tensor in x's dtype."""

from __future__ import annotations

import torch

CHUNK = 1 << 24  # elements summed per fp64 step of the reference


def make_inputs(
    rows: int, cols: int, *, dtype: torch.dtype, device: str, seed: int | None = None
) -> tuple[torch.Tensor]:
    """Normal values scaled by 0.01 (a gradient's size), every 16th row ten times larger
    (frequent tokens' embedding rows, outlier channels), drawn on the device."""
    gen = torch.Generator(device=device)
    gen.manual_seed(seed if seed is not None else int(torch.randint(0, 2**31 - 1, (1,))))
    x = torch.randn(rows, cols, generator=gen, device=device, dtype=torch.float32)
    x.mul_(0.01)
    x[::16].mul_(10.0)
    return (x.to(dtype),)


def reference(x: torch.Tensor) -> torch.Tensor:
    """The sum of squares in fp64, chunk by chunk, its square root rounded to x's dtype."""
    flat = x.reshape(-1)
    total = torch.zeros((), dtype=torch.float64, device=x.device)
    for start in range(0, flat.numel(), CHUNK):
        part = flat[start : start + CHUNK].double()
        total += (part * part).sum()
    return total.sqrt().to(x.dtype)


def torch_vector_norm(x: torch.Tensor) -> torch.Tensor:
    """torch.linalg.vector_norm (ord 2 over every dimension)."""
    return torch.linalg.vector_norm(x)
