"""vLLM's fused MoE-LoRA for a MoE layer's gate/up projection (`_fused_moe_lora` on its
one-shot path, as `add_lora_w13` calls it for batches of more than 64 tokens): inputs,
fp32 reference, torch baseline.

out_base is the base layer's [tokens, top_k, 2 n] gate/up intermediate (the fused MoE's
output before the activation) in the spec's dtype; x the [tokens, hidden] hidden states;
lora_a [slices, loras, experts, rank, hidden] and lora_b [slices, loras, experts, n, rank]
the adapters' per-expert A and B matrices of the gate and up slices (as vLLM stacks them,
one tensor per slice); topk_ids [tokens, top_k] the router's experts, topk_weights their
fp32 weights (not applied to w13); mapping the int32 adapter of each token (-1: none).
The output: out_base plus, for each token with an adapter l and each of its experts e,
(x @ A[s, l, e]^T rounded to the dtype) @ B[s, l, e]^T in columns s n .. (s + 1) n."""

from __future__ import annotations

import torch

Inputs = tuple[
    torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor,
    torch.Tensor,
]  # fmt: skip


def make_inputs(
    tokens: int, hidden: int, n: int, experts: int, top_k: int, rank: int, loras: int,
    slices: int, *, dtype: torch.dtype, device: str, seed: int | None = None,
) -> Inputs:  # fmt: skip
    """Unit-normal hidden states, A at Kaiming-uniform scale (as PEFT initializes it), B
    normal at 1/sqrt(rank) (a trained adapter; PEFT starts it at zero), a base output of
    the delta's size; top-k distinct experts per token from uniform scores with softmaxed
    weights; each token's adapter uniform over the loras slots and none (-1).  Drawn on
    the device."""
    gen = torch.Generator(device=device)
    gen.manual_seed(seed if seed is not None else int(torch.randint(0, 2**31 - 1, (1,))))

    def randn(*shape: int) -> torch.Tensor:
        return torch.randn(*shape, generator=gen, device=device)

    x = randn(tokens, hidden).to(dtype)
    bound = 1.0 / hidden**0.5
    u = torch.rand(slices, loras, experts, rank, hidden, generator=gen, device=device)
    lora_a = ((u * 2 - 1) * bound).to(dtype)
    lora_b = (randn(slices, loras, experts, n, rank) * rank**-0.5).to(dtype)
    out_base = (randn(tokens, top_k, slices * n) * 0.5).to(dtype)
    scores = torch.rand(tokens, experts, generator=gen, device=device)
    vals, topk_ids = scores.topk(top_k, dim=1)
    topk_weights = torch.softmax(vals, dim=1)
    mapping = torch.randint(-1, loras, (tokens,), generator=gen, device=device)
    return (
        out_base, x, lora_a, lora_b, topk_ids.to(torch.int32), topk_weights,
        mapping.to(torch.int32),
    )  # fmt: skip


def _groups(topk_ids: torch.Tensor, mapping: torch.Tensor) -> list[tuple[int, int, torch.Tensor]]:
    """(adapter, expert, flat pair ids) for every non-empty group of pairs."""
    top_k = topk_ids.shape[1]
    lora = mapping.long().repeat_interleave(top_k)
    expert = topk_ids.reshape(-1).long()
    experts = int(expert.max().item()) + 1 if expert.numel() else 0
    key = torch.where(lora >= 0, lora * experts + expert, -1)
    order = torch.argsort(key, stable=True)
    keys, counts = torch.unique_consecutive(key[order], return_counts=True)
    out, at = [], 0
    for k, c in zip(keys.tolist(), counts.tolist(), strict=True):
        if k >= 0:
            out.append((k // experts, k % experts, order[at : at + c]))
        at += c
    return out


def reference(
    out_base: torch.Tensor, x: torch.Tensor, lora_a: torch.Tensor, lora_b: torch.Tensor,
    topk_ids: torch.Tensor, topk_weights: torch.Tensor, mapping: torch.Tensor,
) -> torch.Tensor:  # fmt: skip
    """Per (adapter, expert) group of pairs, in fp32 from the same rounded inputs: the
    shrink, its rounding to the dtype (the kernel's register tile), the expand, the delta
    rounded to the dtype and added to the base."""
    slices, _, _, _, _ = lora_a.shape
    n = lora_b.shape[3]
    top_k = topk_ids.shape[1]
    dtype = out_base.dtype
    out = out_base.float().reshape(-1, slices * n).clone()
    for lora, expert, pairs in _groups(topk_ids, mapping):
        rows = x[pairs // top_k].float()
        for s in range(slices):
            tmp = (rows @ lora_a[s, lora, expert].float().t()).to(dtype).float()
            delta = (tmp @ lora_b[s, lora, expert].float().t()).to(dtype).float()
            out[pairs, s * n : (s + 1) * n] += delta
    return out.to(dtype).reshape(out_base.shape)


def torch_moe_lora(
    out_base: torch.Tensor, x: torch.Tensor, lora_a: torch.Tensor, lora_b: torch.Tensor,
    topk_ids: torch.Tensor, topk_weights: torch.Tensor, mapping: torch.Tensor,
) -> torch.Tensor:  # fmt: skip
    """The same by torch in the dtype: pairs grouped by (adapter, expert) (the groups read
    back to the host), per group and slice one shrink and one expand matmul, added into a
    copy of the base output with index_add_."""
    slices = lora_a.shape[0]
    n = lora_b.shape[3]
    top_k = topk_ids.shape[1]
    out = out_base.clone().reshape(-1, slices * n)
    for lora, expert, pairs in _groups(topk_ids, mapping):
        rows = x[pairs // top_k]
        for s in range(slices):
            delta = (rows @ lora_a[s, lora, expert].t()) @ lora_b[s, lora, expert].t()
            out[:, s * n : (s + 1) * n].index_add_(0, pairs, delta)
    return out.reshape(out_base.shape)
