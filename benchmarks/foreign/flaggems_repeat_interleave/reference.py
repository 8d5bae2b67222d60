"""FlagGems' repeat_interleave of a repeats tensor (each expert-sorted row's expert id in an
MoE layer): inputs, reference, torch baseline.

counts is [experts] int64 (the rows routed to each expert, as a bincount of the router's
top-k ids gives them) whatever the spec's dtype; the output is the [tokens * topk] int64
expert id of every row of the expert-sorted order: expert e repeated counts[e] times."""

from __future__ import annotations

import torch


def make_inputs(
    tokens: int,
    topk: int,
    experts: int,
    *,
    dtype: torch.dtype,
    device: str,
    seed: int | None = None,
) -> tuple[torch.Tensor]:
    """Each token routes to topk distinct experts drawn with a skewed popularity (a few hot
    experts, some rarely or never chosen); counts per expert, summing to tokens * topk."""
    del dtype  # int64 counts whatever the dtype
    gen = torch.Generator(device="cpu")
    gen.manual_seed(seed if seed is not None else int(torch.randint(0, 2**31 - 1, (1,))))
    popularity = torch.rand(experts, generator=gen) ** 3 + 0.05
    ids = torch.multinomial(popularity.expand(tokens, experts), topk, generator=gen)
    counts = torch.bincount(ids.flatten(), minlength=experts)
    return (counts.to(device),)


def reference(counts: torch.Tensor) -> torch.Tensor:
    """Each row's expert: the number of experts whose rows all come before it (a search of
    the running totals, not a repeat)."""
    ends = counts.cumsum(0)
    rows = torch.arange(int(ends[-1]), device=counts.device)
    return torch.searchsorted(ends, rows, right=True)


def torch_repeat_interleave(counts: torch.Tensor) -> torch.Tensor:
    """The same ids by torch.repeat_interleave (its own cumsum and host sync included)."""
    return torch.repeat_interleave(counts)
