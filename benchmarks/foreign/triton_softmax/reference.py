"""Row softmax for the Triton tutorial kernel: inputs, fp32 reference, torch baseline."""

from __future__ import annotations

import torch


def make_inputs(
    rows: int, cols: int, *, dtype: torch.dtype, device: str, seed: int | None = None
) -> tuple[torch.Tensor]:
    gen = torch.Generator(device="cpu")
    gen.manual_seed(seed if seed is not None else int(torch.randint(0, 2**31 - 1, (1,))))
    return (torch.randn(rows, cols, generator=gen).to(dtype=dtype, device=device),)


def reference(x: torch.Tensor) -> torch.Tensor:
    return torch.softmax(x.float(), dim=-1).to(x.dtype)


def torch_softmax(x: torch.Tensor) -> torch.Tensor:
    return torch.softmax(x, dim=-1)
