"""FlagGems' RWKV sparse matrix product (`rwkv_mm_sparsity`): inputs, reference, torch
baseline.

k is [keys] (RWKV-7's channel-mix key, relu(x @ W_key) ** 2 for one token: `nonzeros` of
its elements non-zero) and v is [keys, cols] (the value weight, pre-transposed as RWKV's
inference code holds it), both in the spec's dtype; the output is [cols] in that dtype,
out = k @ v."""

from __future__ import annotations

import torch


def make_inputs(
    keys: int,
    cols: int,
    nonzeros: int,
    *,
    dtype: torch.dtype,
    device: str,
    seed: int | None = None,
) -> tuple[torch.Tensor, torch.Tensor]:
    """A key with `nonzeros` squared-ReLU values (squares of |normal| values) at random
    positions and zeros elsewhere, and a value weight of normal values scaled by
    1 / sqrt(keys) (an initialised linear layer's spread)."""
    gen = torch.Generator(device="cpu")
    gen.manual_seed(seed if seed is not None else int(torch.randint(0, 2**31 - 1, (1,))))
    k = torch.zeros(keys)
    where = torch.randperm(keys, generator=gen)[:nonzeros]
    k[where] = torch.randn(nonzeros, generator=gen).square()
    v = torch.randn(keys, cols, generator=gen) * keys**-0.5
    return k.to(dtype=dtype, device=device), v.to(dtype=dtype, device=device)


def reference(k: torch.Tensor, v: torch.Tensor) -> torch.Tensor:
    """In fp64 from the rounded inputs (every row, zero keys included), then rounded to
    k's dtype."""
    return (k.double() @ v.double()).to(k.dtype)


def torch_vecmat(k: torch.Tensor, v: torch.Tensor) -> torch.Tensor:
    """k @ v by torch (cuBLAS' dense GEMV over every row of v)."""
    return k @ v
