"""1-D neighborhood attention for Liger's kernels: inputs, fp32 reference, torch baseline.

Each query attends only to the keys within kernel_size // 2 positions of it (7 keys at
Liger's default kernel size, dilation 1), with the usual 1/sqrt(d) scale and softmax.  q, k
and v are [b, h, s, d] in the model dtype; the output is the attention output [b, h, s, d]
in the same dtype."""

from __future__ import annotations

import math

import torch

KERNEL_SIZE = 7  # liger's default neighborhood
DILATION = 1  # liger's default


def make_inputs(
    b: int, h: int, s: int, d: int, *, dtype: torch.dtype, device: str,
    seed: int | None = None,
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:  # fmt: skip
    gen = torch.Generator(device="cpu")
    gen.manual_seed(seed if seed is not None else int(torch.randint(0, 2**31 - 1, (1,))))
    q, k, v = (torch.randn(b, h, s, d, generator=gen) for _ in range(3))
    return tuple(t.to(dtype=dtype, device=device) for t in (q, k, v))  # type: ignore[return-value]


def neighborhood(s: int, device: torch.device | str) -> torch.Tensor:
    """[s, s] bool: key j is in query i's neighborhood."""
    i = torch.arange(s, device=device)[:, None]
    j = torch.arange(s, device=device)[None, :]
    rel = j - i
    near = rel.abs() <= (KERNEL_SIZE // 2) * DILATION
    return near & (rel % DILATION == 0)


def _attend(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor) -> torch.Tensor:
    scores = (q @ k.transpose(-1, -2)) / math.sqrt(q.shape[-1])
    scores = scores.masked_fill(~neighborhood(q.shape[2], q.device), float("-inf"))
    return torch.softmax(scores, dim=-1) @ v


def reference(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor) -> torch.Tensor:
    return _attend(q.float(), k.float(), v.float()).to(q.dtype)


def torch_neighborhood_attention(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor) -> torch.Tensor:
    """Masked dense attention in plain torch, in the input dtype: the full [s, s] scores,
    a mask, a softmax and a matmul (what a model without a neighborhood kernel runs)."""
    return _attend(q, k, v)
