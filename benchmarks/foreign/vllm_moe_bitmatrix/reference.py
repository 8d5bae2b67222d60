"""vLLM's top-k bitmatrix packing for the triton_kernels MoE path (the `pack_bitmatrix`
launch of `make_routing_data`, which `OAITritonExperts` calls under expert parallelism):
inputs, reference, torch baseline.

topk_ids is [tokens, topk] int32: every token's routed experts after the dispatch and
vLLM's `remap_topk_to_local`, the experts this rank holds renumbered from 0 and the others
-1 (rank 0 of `ep` holds experts [0, experts / ep)).  local_experts is a Python int.  The
output is [tokens, ceil(local_experts / 32)] uint32: bit e % 32 of word e // 32 set for
every local expert e the token routes to."""

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
) -> tuple[torch.Tensor, int]:
    """Each token's topk distinct experts drawn uniformly from the global experts (a
    balanced router), then remapped for rank 0: about topk / ep of them local."""
    del dtype  # integer ids whatever the spec's dtype
    if experts % ep or topk > 32 or topk > experts:
        raise ValueError("ep must divide experts and topk be at most 32 (vLLM's 32-lane tile)")
    gen = torch.Generator(device="cpu")
    gen.manual_seed(seed if seed is not None else int(torch.randint(0, 2**31 - 1, (1,))))
    ids = torch.rand(tokens, experts, generator=gen).argsort(dim=1)[:, :topk]
    local = experts // ep
    ids = torch.where(ids < local, ids, torch.full_like(ids, -1)).to(torch.int32)
    return ids.to(device), local


def reference(topk_ids: torch.Tensor, local_experts: int) -> torch.Tensor:
    """In int64: a one-hot [tokens, words * 32] of the valid ids, then each word's 32 bits
    weighted by their powers of two and summed."""
    tokens = topk_ids.shape[0]
    words = (local_experts + 31) // 32
    ids = topk_ids.long().cpu()
    onehot = torch.zeros(tokens, words * 32, dtype=torch.int64)
    valid = ids >= 0
    rows = torch.arange(tokens)[:, None].expand_as(ids)
    onehot[rows[valid], ids[valid]] = 1
    weights = torch.ones(32, dtype=torch.int64) << torch.arange(32)
    return (onehot.view(tokens, words, 32) * weights).sum(-1).to(topk_ids.device)


def torch_bitmatrix(topk_ids: torch.Tensor, local_experts: int) -> torch.Tensor:
    """The same by torch ops on the device: a scatter of ones into a [tokens, words * 32]
    int32 one-hot (the -1 slots sent to a spare column), shifted by the bit position and
    summed per word into int64, kept as uint32."""
    tokens, _ = topk_ids.shape
    words = (local_experts + 31) // 32
    ids = topk_ids.long()
    spare = words * 32
    onehot = torch.zeros(tokens, spare + 1, dtype=torch.int64, device=ids.device)
    onehot.scatter_(1, torch.where(ids >= 0, ids, spare), 1)
    shifts = torch.arange(32, device=ids.device, dtype=torch.int64)
    packed = (onehot[:, :spare].view(tokens, words, 32) << shifts).sum(-1)
    return packed.to(torch.uint32)
