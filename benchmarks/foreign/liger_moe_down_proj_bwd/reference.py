"""The backward of a mixture-of-experts MLP's down projection and SwiGLU, for Liger's fused
MoE backward (`_moe_bwd_down_proj_kernel`): inputs, fp32 reference, torch baseline.

d_out [tokens, hidden] is the gradient of the layer's output, in the model dtype; pre_act
[tokens * k, 2 * inter] holds the up projection's pre-activations the forward saved (gate
in the first inter columns, up in the rest), one row per (token, expert) assignment in the
order Liger's routing sorts them: by expert, then by token (a stable sort of the flat top-k
ids); down [experts, hidden, inter] stacks every expert's down weight (as Liger and HF's
fused experts hold them); topk [tokens, k] (int32) is each token's experts and weights
[tokens, k] their routing weights, in the model dtype.  With y1 = silu(gate) * up and
g = d_out[token] @ down[e] (the gradient of y1 before the routing weight s), the outputs
are:

- d_pre_act [tokens * k, 2 * inter], sorted like pre_act: s * g * silu'(gate) * up, then
  s * g * silu(gate) (SwiGLU's backward through the routing weight);
- weighted_act [tokens * k, inter], sorted: s * y1 (the down weight gradient's left
  operand, which Liger's next kernel reads);
- d_weights [tokens, k]: the gradient of each routing weight, sum over inter of g * y1,
  in each token's top-k order.

All three in the model dtype."""

from __future__ import annotations

import torch
import torch.nn.functional as F

from foreign.liger_moe_up_proj_wgrad.reference import (
    biased_router_logits,
    renormalised_top_k,
    seeded_generator,
)


def _inputs(
    tokens: int,
    hidden: int,
    inter: int,
    experts: int,
    k: int,
    *,
    dtype: torch.dtype,
    device: str,
    seed: int | None,
    unrouted: int | None,
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor]:
    if k > experts - (unrouted is not None):
        raise ValueError("k must be at most the experts a token can be routed to")
    gen = seeded_generator(seed, device)
    d_out = torch.randn(tokens, hidden, generator=gen, device=device, dtype=dtype)
    d_out.mul_(0.01)  # a gradient's scale
    pre_act = torch.randn(tokens * k, 2 * inter, generator=gen, device=device, dtype=dtype)
    down = torch.randn(experts, hidden, inter, generator=gen, device=device, dtype=dtype)
    down.mul_(inter**-0.5)
    logits = biased_router_logits(tokens, experts, gen, device, unrouted)
    topk, weights = renormalised_top_k(logits, k, dtype)
    return d_out, pre_act, down, topk, weights


def make_inputs(
    tokens: int,
    hidden: int,
    inter: int,
    experts: int,
    k: int,
    *,
    dtype: torch.dtype,
    device: str,
    seed: int | None = None,
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor]:
    """A gradient of 0.01-scaled normal values, unit-normal pre-activations, down weights
    at 1/sqrt(inter) (unit-scale outputs in the forward), and routing as Qwen3-MoE's router
    gives it: the top-k of the softmax of randn logits plus a per-expert bias (N(0, 0.01)),
    renormalised to sum to one per token, so that the experts' loads are uneven as a
    load-balanced router's are within one micro-batch (at the trials the busiest expert
    gets 1.5 to 1.7 times the mean rows and the idlest 0.5 to 0.65 times).  Drawn on the
    target device: the large trial's pre-activations are 201 M values, which the CPU would
    take seconds to fill."""
    return _inputs(
        tokens, hidden, inter, experts, k, dtype=dtype, device=device, seed=seed,
        unrouted=None,
    )  # fmt: skip


def make_check_inputs(
    tokens: int,
    hidden: int,
    inter: int,
    experts: int,
    k: int,
    *,
    dtype: torch.dtype,
    device: str,
    seed: int | None = None,
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor]:
    """As make_inputs, but no token is routed to expert experts // 2, so Liger's routing
    gives that expert no tile and the tiles of its neighbours must still be right."""
    return _inputs(
        tokens, hidden, inter, experts, k, dtype=dtype, device=device, seed=seed,
        unrouted=experts // 2,
    )  # fmt: skip


def _sorted_assignments(topk: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """(flat (token, k) index, token, expert) of each assignment, sorted by expert, then by
    token: the row order of pre_act and d_pre_act."""
    flat = topk.flatten().long()
    order = torch.argsort(flat, stable=True)
    return order, order // topk.shape[1], flat[order]


def _backward(
    d_out: torch.Tensor,
    pre_act: torch.Tensor,
    down: torch.Tensor,
    topk: torch.Tensor,
    weights: torch.Tensor,
    acc: torch.dtype,
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """One GEMM per routed expert (its tokens' d_out rows times its down weight, as the
    autograd of HF's expert loop computes it), then SwiGLU's backward element-wise."""
    flat, token, expert = _sorted_assignments(topk)
    inter = down.shape[2]
    grad = torch.empty(len(token), inter, dtype=acc, device=d_out.device)
    counts = torch.bincount(expert, minlength=down.shape[0]).tolist()
    start = 0
    for e, n in enumerate(counts):
        if n:
            rows = slice(start, start + n)
            grad[rows] = d_out[token[rows]].to(acc) @ down[e].to(acc)
        start += n
    s = weights.flatten()[flat].to(acc)[:, None]
    gate, up = pre_act.to(acc).chunk(2, dim=-1)
    sig = torch.sigmoid(gate)
    silu = F.silu(gate)
    y1 = silu * up
    d_weights = torch.empty(topk.numel(), dtype=acc, device=d_out.device)
    d_weights[flat] = (grad * y1).sum(dim=-1)
    grad = grad * s
    d_gate = grad * (silu * (1.0 - sig) + sig) * up
    d_up = grad * silu
    d_pre = torch.cat([d_gate, d_up], dim=-1)
    return d_pre, s * y1, d_weights.view(topk.shape)


def reference(
    d_out: torch.Tensor,
    pre_act: torch.Tensor,
    down: torch.Tensor,
    topk: torch.Tensor,
    weights: torch.Tensor,
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """The products and the element-wise backward in fp32 from the rounded inputs, each
    output rounded once to the dtype."""
    outs = _backward(d_out, pre_act, down, topk, weights, torch.float32)
    d_pre, weighted_act, d_weights = (o.to(d_out.dtype) for o in outs)
    return d_pre, weighted_act, d_weights


def torch_moe_down_proj_bwd(
    d_out: torch.Tensor,
    pre_act: torch.Tensor,
    down: torch.Tensor,
    topk: torch.Tensor,
    weights: torch.Tensor,
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """HF's expert loop's backward in the input dtype: a gather of each routed expert's
    d_out rows and one cuBLAS matmul per expert (a host sync for the expert counts), then
    SwiGLU's backward and the routing weights' gradient in element-wise torch kernels."""
    return _backward(d_out, pre_act, down, topk, weights, d_out.dtype)
