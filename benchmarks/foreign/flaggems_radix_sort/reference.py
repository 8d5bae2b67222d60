"""FlagGems' radix sort of a sampler's logits along the last axis, ascending: inputs, the
reference, torch baseline.

x is [rows, columns] fp32 whatever the spec's dtype (vLLM's sampler sorts the fp32 logits
it made for top-p); the outputs are the sorted values (fp32) and their int64 columns, ties
kept in column order (an LSD radix sort is stable)."""

from __future__ import annotations

import torch


def make_inputs(
    rows: int, columns: int, *, dtype: torch.dtype, device: str, seed: int | None = None
) -> tuple[torch.Tensor]:
    """Logits-like fp32 rows (normal, scale 3, a few large ones), with -0.0 made +0.0 (the
    radix keys order -0.0 before +0.0, torch's sort calls them equal).  `dtype` only
    names the spec's dtype: the sampler's logits are fp32."""
    del dtype
    gen = torch.Generator(device="cpu")
    gen.manual_seed(seed if seed is not None else int(torch.randint(0, 2**31 - 1, (1,))))
    x = 3.0 * torch.randn(rows, columns, generator=gen)
    hot = torch.randint(0, columns, (rows, 8), generator=gen)
    x.scatter_(1, hot, 20.0 + torch.rand(rows, 8, generator=gen))
    x = x + 0.0  # -0.0 + 0.0 is +0.0
    return (x.to(device),)


def reference(x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """torch's stable sort (ascending): equal keys keep their column order, as the radix
    sort's passes do."""
    values, indices = torch.sort(x.float(), dim=-1, descending=False, stable=True)
    return values, indices


def torch_sort(x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """The same sort by torch, as vLLM's top-p sampler calls it."""
    values, indices = x.sort(dim=-1, descending=False)
    return values, indices
