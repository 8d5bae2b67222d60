"""FlagGems' masked_select (the values under a boolean mask, in order, as one flat tensor):
inputs, reference, torch baseline.

hidden is [rows, hidden] in the spec's dtype, mask a [rows, hidden] bool tensor that keeps
`live` whole rows (each chosen row's mask expanded over the hidden size, contiguous); the
output is the [live * hidden] values of the kept rows in order."""

from __future__ import annotations

import torch


def make_inputs(
    rows: int, hidden: int, live: int, *, dtype: torch.dtype, device: str,
    seed: int | None = None,
) -> tuple[torch.Tensor, torch.Tensor]:  # fmt: skip
    """Hidden states of a standard normal; `live` rows drawn at random keep their values
    (the live sequences of a batch, or the real tokens of a padded one)."""
    gen = torch.Generator(device="cpu")
    gen.manual_seed(seed if seed is not None else int(torch.randint(0, 2**31 - 1, (1,))))
    x = torch.randn(rows, hidden, generator=gen)
    keep = torch.zeros(rows, dtype=torch.bool)
    keep[torch.randperm(rows, generator=gen)[:live]] = True
    mask = keep[:, None].expand(rows, hidden).contiguous()
    return x.to(dtype=dtype, device=device), mask.to(device)


def reference(x: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
    """The kept positions listed by nonzero, then gathered (no compaction kernel)."""
    where = mask.reshape(-1).nonzero().squeeze(1)
    return x.reshape(-1)[where]


def torch_masked_select(x: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
    """The same by torch (aten's masked_select, what `x[mask]` on a bool mask reaches)."""
    return torch.masked_select(x, mask)
