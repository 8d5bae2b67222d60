"""vLLM's weighted top-k sum of the Humming MoE experts (the `moe_fused_mul_sum` call that
ends `HummingExperts.apply`, summing the down projection's per-slot rows): inputs,
reference, torch baseline.

inputs is [tokens, topk, hidden] in the spec's dtype: the down projection's output row of
every (token, slot) pair; the rows of slots this rank skipped (other ranks' experts) are
NaN, as never-written buffer rows may hold anything, so reading one shows.  topk_weights
is [tokens, topk] fp32 (vLLM's `fused_topk` weights, renormalized), topk_ids [tokens,
topk] int32 global expert ids, expert_map [experts] int32 (vLLM's EP map for rank 0 of
`ep`: experts [0, experts / ep) to themselves, the others to -1) or None without expert
parallelism.  Every token has at least one local expert (an all-to-all dispatch sends a
rank only the tokens routed to it).  The output is [tokens, hidden] in the inputs' dtype."""

from __future__ import annotations

import torch


def make_inputs(
    tokens: int,
    topk: int,
    hidden: int,
    experts: int,
    ep: int,
    *,
    dtype: torch.dtype,
    device: str,
    seed: int | None = None,
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor | None]:
    """A balanced router's topk distinct experts per token, drawn on the device."""
    if experts % ep or topk > experts:
        raise ValueError("ep must divide experts and topk be at most experts")
    gen = torch.Generator(device=device)
    gen.manual_seed(seed if seed is not None else int(torch.randint(0, 2**31 - 1, (1,))))
    ids = torch.rand(tokens, experts, generator=gen, device=device).argsort(dim=1)[:, :topk]
    local = experts // ep
    expert_map = None
    if ep > 1:
        none_local = (ids >= local).all(dim=1)
        pick = torch.randint(0, local, (tokens,), generator=gen, device=device)
        ids[:, 0] = torch.where(none_local, pick, ids[:, 0])
        ar = torch.arange(experts, device=device)
        expert_map = torch.where(ar < local, ar, torch.full_like(ar, -1)).to(torch.int32)
    ids = ids.to(torch.int32).contiguous()
    weights = torch.rand(tokens, topk, generator=gen, device=device) + 0.05
    weights = (weights / weights.sum(dim=1, keepdim=True)).contiguous()
    inputs = torch.randn(tokens, topk, hidden, generator=gen, device=device, dtype=dtype)
    inputs.masked_fill_(~_taken(ids, expert_map)[..., None], float("nan"))
    return inputs, weights, ids, expert_map


def _taken(ids: torch.Tensor, expert_map: torch.Tensor | None) -> torch.Tensor:
    """The (token, slot) pairs summed: a valid id whose expert is local."""
    take = ids >= 0
    if expert_map is not None:
        take &= expert_map[ids.long().clamp(min=0)] >= 0
    return take


def reference(
    inputs: torch.Tensor, topk_weights: torch.Tensor, topk_ids: torch.Tensor,
    expert_map: torch.Tensor | None,
) -> torch.Tensor:  # fmt: skip
    """On the CPU in float64: the taken rows times their weights, summed over the slots."""
    x = inputs.cpu().double()
    take = _taken(topk_ids.cpu(), None if expert_map is None else expert_map.cpu())
    w = topk_weights.cpu().double() * take
    x = torch.where(take[..., None], x, torch.zeros_like(x))
    out = (x * w[..., None]).sum(dim=1)
    return out.to(inputs.dtype).to(inputs.device)


def torch_mul_sum(
    inputs: torch.Tensor, topk_weights: torch.Tensor, topk_ids: torch.Tensor,
    expert_map: torch.Tensor | None,
) -> torch.Tensor:  # fmt: skip
    """The same by torch ops on the device: the skipped rows zeroed by a where, times the
    fp32 weights, summed over the slots in fp32."""
    take = _taken(topk_ids, expert_map)
    x = torch.where(
        take[..., None], inputs, torch.zeros((), dtype=inputs.dtype, device=inputs.device)
    )
    w = topk_weights.float() * take
    return (x.float() * w[..., None]).sum(dim=1).to(inputs.dtype)
