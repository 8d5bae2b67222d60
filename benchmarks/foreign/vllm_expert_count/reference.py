"""vLLM's per-expert token count for the DeepGEMM MoE path (the `_count_expert_num_tokens`
launch of `count_expert_num_tokens`, which `deepgemm_moe_permute` calls when the dispatch
left no per-expert counts, e.g. a DeepEP cudagraph decode or no all-to-all at all):
inputs, reference, torch baseline.

topk_ids is [tokens, topk] int32: every token's routed experts as global ids (vLLM's
`fused_topk` output).  expert_map is [experts] int32 (vLLM's EP expert map for rank 0 of
`ep`: experts [0, experts / ep) to themselves, the others to -1), or None without expert
parallelism.  local_experts is a Python int.  The output is [local_experts] int32: how many
(token, slot) pairs route to each local expert."""

from __future__ import annotations

import torch


def make_inputs(
    tokens: int,
    experts: int,
    topk: int,
    ep: int,
    *,
    dtype: torch.dtype,
    device: str,
    seed: int | None = None,
) -> tuple[torch.Tensor, int, torch.Tensor | None]:
    """Each token's topk distinct experts drawn uniformly from the global experts (a
    balanced router: about tokens * topk / experts hits an expert)."""
    del dtype  # integer ids whatever the spec's dtype
    if experts % ep or topk > experts:
        raise ValueError("ep must divide experts and topk be at most experts")
    gen = torch.Generator(device="cpu")
    gen.manual_seed(seed if seed is not None else int(torch.randint(0, 2**31 - 1, (1,))))
    ids = torch.rand(tokens, experts, generator=gen).argsort(dim=1)[:, :topk]
    local = experts // ep
    expert_map = None
    if ep > 1:
        ar = torch.arange(experts)
        expert_map = torch.where(ar < local, ar, torch.full_like(ar, -1)).to(torch.int32)
        expert_map = expert_map.to(device)
    return ids.to(torch.int32).contiguous().to(device), local, expert_map


def reference(
    topk_ids: torch.Tensor, local_experts: int, expert_map: torch.Tensor | None
) -> torch.Tensor:
    """On the CPU in int64: the ids mapped through the expert map, the -1s dropped, a
    bincount over the local experts."""
    ids = topk_ids.long().cpu().flatten()
    if expert_map is not None:
        ids = expert_map.long().cpu()[ids.clamp(min=0)].masked_fill(ids < 0, -1)
    ids = ids[(ids >= 0) & (ids < local_experts)]
    counts = torch.bincount(ids, minlength=local_experts)
    return counts.to(torch.int32).to(topk_ids.device)


def torch_count(
    topk_ids: torch.Tensor, local_experts: int, expert_map: torch.Tensor | None
) -> torch.Tensor:
    """The same by torch ops on the device: the ids mapped by an index into the expert
    map, the -1s sent to a spare bin, one bincount."""
    ids = topk_ids.flatten().long()
    if expert_map is not None:
        ids = expert_map[ids.clamp(min=0)].long().masked_fill(ids < 0, -1)
    ids = torch.where(ids >= 0, ids, local_experts)
    return torch.bincount(ids, minlength=local_experts + 1)[:local_experts].to(torch.int32)
