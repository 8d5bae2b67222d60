"""FlagGems' MoE gating top-k softmax (`topk_softmax`, FlagGems' replacement for vLLM's
`_moe_C.topk_softmax`): inputs, reference, torch baseline.

gating_output is [tokens, experts] in the spec's dtype: the router's logits, as the MoE
block's gate linear layer writes them.  The outputs, as vLLM's `fused_topk` allocates
them: topk_weights [tokens, topk] fp32, each token's topk largest softmax probabilities in
descending order, renormalized to sum to one (Qwen3 MoE's norm_topk_prob); topk_ids
[tokens, topk] int32, their experts; token_expert_indices [tokens, topk] int32, the
source row k * tokens + token of each pair (what vLLM's MoE permutation reads)."""

from __future__ import annotations

import math

import torch


def make_inputs(
    tokens: int, experts: int, topk: int, *, dtype: torch.dtype, device: str,
    seed: int | None = None,
) -> tuple[torch.Tensor, int]:  # fmt: skip
    """Each token's logits a random permutation of `experts` distinct multiples of a power
    of two spread over about [-4, 4) (exact in bf16, fp16 and fp32), so that no two experts
    tie and the chosen ids are the same whatever the rounding of the softmax."""
    if not 1 <= topk <= min(experts, 32):
        raise ValueError("need 1 <= topk <= min(experts, 32)")
    gen = torch.Generator(device="cpu")
    gen.manual_seed(seed if seed is not None else int(torch.randint(0, 2**31 - 1, (1,))))
    step = 2.0 ** -max(0, math.ceil(math.log2(max(experts, 8) / 8)))
    ranks = torch.argsort(torch.rand(tokens, experts, generator=gen), dim=1)
    logits = (ranks - experts // 2).double() * step
    return logits.to(dtype=dtype, device=device), topk


def reference(
    gating_output: torch.Tensor, topk: int
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """In fp64: the softmax over the experts, torch.topk, the selected probabilities divided
    by their sum, then fp32 weights; the source rows from the shape alone."""
    probs = torch.softmax(gating_output.double(), dim=-1)
    weights, ids = torch.topk(probs, topk, dim=-1)
    weights = weights / weights.sum(-1, keepdim=True)
    tokens = gating_output.shape[0]
    rows = (
        torch.arange(topk, device=gating_output.device)[None, :] * tokens
        + torch.arange(tokens, device=gating_output.device)[:, None]
    )
    return weights.float(), ids.to(torch.int32), rows.to(torch.int32)


def torch_topk_softmax(
    gating_output: torch.Tensor, topk: int
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """vLLM's torch fallback (`fused_topk_torch`-like): an fp32 softmax, torch.topk, the
    renormalization, and the source rows by arange."""
    probs = torch.softmax(gating_output.float(), dim=-1)
    weights, ids = torch.topk(probs, topk, dim=-1)
    weights = weights / weights.sum(-1, keepdim=True)
    tokens = gating_output.shape[0]
    dev = gating_output.device
    rows = (
        torch.arange(topk, device=dev, dtype=torch.int32)[None, :] * tokens
        + torch.arange(tokens, device=dev, dtype=torch.int32)[:, None]
    )
    return weights, ids.to(torch.int32), rows
