"""The combine of a mixture-of-experts layer's expert outputs, for Liger's token
aggregation (`_token_gather_weighted_sum_kernel`): inputs, fp32 reference, torch baseline.

y [tokens * k, hidden] is the down projection's output, one row per (token, expert)
assignment in the order Liger's routing sorts them: by expert, then by token (a stable
sort of the flat top-k ids), as Liger's down-projection GEMM leaves it; topk [tokens, k]
(int32) is each token's experts and weights [tokens, k] their routing weights, in the
model dtype.  The output out [tokens, hidden], in the model dtype, is each token's k rows
of y, found through the inverse of that sort, times their routing weights and summed:
out[t] = sum_j weights[t, j] * y[sorted position of (t, j)]."""

from __future__ import annotations

import torch

from foreign.liger_moe_up_proj_wgrad.reference import (
    biased_router_logits,
    renormalised_top_k,
    seeded_generator,
)


def make_inputs(
    tokens: int,
    hidden: int,
    experts: int,
    k: int,
    *,
    dtype: torch.dtype,
    device: str,
    seed: int | None = None,
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """Unit-normal expert outputs (a down projection's at weights of 1/sqrt(inter)), and
    routing as Qwen3-MoE's router gives it: the top-k of the softmax of randn logits plus
    a per-expert bias (N(0, 0.01)), renormalised to sum to one per token, so that the
    experts' loads are uneven as a load-balanced router's are within one micro-batch.
    Drawn on the target device: the large trial's y is 268 M values, which the CPU would
    take seconds to fill."""
    if k > experts:
        raise ValueError("k must be at most the experts")
    gen = seeded_generator(seed, device)
    y = torch.randn(tokens * k, hidden, generator=gen, device=device, dtype=dtype)
    logits = biased_router_logits(tokens, experts, gen, device, None)
    topk, weights = renormalised_top_k(logits, k, dtype)
    return y, weights, topk


def sorted_position(topk: torch.Tensor) -> torch.Tensor:
    """Each flat (token, j) assignment's row in y: the inverse of the stable sort of the
    flat top-k ids (Liger's s_reverse_scatter_idx)."""
    order = torch.argsort(topk.flatten().long(), stable=True)
    pos = torch.empty_like(order)
    pos[order] = torch.arange(order.numel(), device=order.device)
    return pos


def _combine(
    y: torch.Tensor, weights: torch.Tensor, topk: torch.Tensor, acc: torch.dtype
) -> torch.Tensor:
    tokens, k = topk.shape
    rows = y[sorted_position(topk)].view(tokens, k, y.shape[1]).to(acc)
    return (rows * weights.to(acc)[..., None]).sum(dim=1)


def reference(y: torch.Tensor, weights: torch.Tensor, topk: torch.Tensor) -> torch.Tensor:
    return _combine(y, weights, topk, torch.float32).to(y.dtype)


def torch_moe_combine(y: torch.Tensor, weights: torch.Tensor, topk: torch.Tensor) -> torch.Tensor:
    """HF's combine in the input dtype: each token's rows gathered, scaled by their routing
    weights and summed over the top-k."""
    return _combine(y, weights, topk, y.dtype)
