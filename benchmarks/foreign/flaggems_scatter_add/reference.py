"""FlagGems' scatter_add_ along the last dimension (an MoE router's per-expert load): inputs,
fp64 reference, torch baseline.

expert_ids is [tokens * topk] int64 (the router's top-k choices, flattened, as torch's
topk returns them), weights is [tokens * topk] fp32 (their gate weights; DeepSeek-V3's
router computes them in fp32), both whatever the spec's dtype; the output is the [experts]
fp32 sum of the weights routed to each expert."""

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
) -> tuple[torch.Tensor, torch.Tensor, int]:
    """Each token routes to topk distinct experts drawn with a skewed popularity (a few hot
    experts, as trained routers have), weights a softmax over its topk scores."""
    del dtype  # int64 ids and fp32 weights whatever the dtype
    gen = torch.Generator(device="cpu")
    gen.manual_seed(seed if seed is not None else int(torch.randint(0, 2**31 - 1, (1,))))
    popularity = torch.rand(experts, generator=gen) ** 3 + 0.05
    ids = torch.multinomial(popularity.expand(tokens, experts), topk, generator=gen)
    weights = torch.softmax(torch.randn(tokens, topk, generator=gen), dim=-1)
    return ids.flatten().to(device), weights.flatten().to(device), experts


def reference(expert_ids: torch.Tensor, weights: torch.Tensor, experts: int) -> torch.Tensor:
    """The per-expert sums in fp64 (index_add), rounded once to fp32."""
    out = torch.zeros(experts, dtype=torch.float64, device=weights.device)
    return out.index_add_(0, expert_ids, weights.double()).float()


def torch_scatter_add(
    expert_ids: torch.Tensor, weights: torch.Tensor, experts: int
) -> torch.Tensor:
    """The same load by torch: zeros, then scatter_add_ (what the caller would write)."""
    out = torch.zeros(experts, dtype=torch.float32, device=weights.device)
    return out.scatter_add_(0, expert_ids, weights)
