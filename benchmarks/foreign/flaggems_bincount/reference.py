"""FlagGems' bincount over an MoE layer's routed expert ids (the tokens each expert
received at this step): inputs, reference, torch baseline.

ids is the flat [tokens * topk] int64 top-k expert ids of a router (each token's topk
distinct experts, drawn with a per-expert bias so that the load is uneven, as real routers'
is); the output is the [experts] int64 count of ids per expert (minlength = experts)."""

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
) -> tuple[torch.Tensor, int]:
    """Each token's top-k of normal router logits plus a per-expert bias (N(0, 1)): distinct
    experts per token, uneven loads.  Drawn on the target device; ids are int64 whatever
    the spec's dtype."""
    gen = torch.Generator(device=device)
    gen.manual_seed(seed if seed is not None else int(torch.randint(0, 2**31 - 1, (1,))))
    bias = torch.randn(experts, generator=gen, device=device)
    logits = torch.randn(tokens, experts, generator=gen, device=device) + bias
    ids = logits.topk(topk, dim=-1).indices.reshape(-1).contiguous()
    return ids, experts


def reference(ids: torch.Tensor, experts: int) -> torch.Tensor:
    """The count per expert as a sum of one-hot comparisons (int64)."""
    bins = torch.arange(experts, device=ids.device)
    return (ids[:, None] == bins[None, :]).sum(dim=0, dtype=torch.int64)


def torch_bincount(ids: torch.Tensor, experts: int) -> torch.Tensor:
    """torch.bincount with minlength = experts."""
    return torch.bincount(ids, minlength=experts)
