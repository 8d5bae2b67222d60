"""The input gradient of a mixture-of-experts MLP's gate/up projection, for Liger's fused
MoE backward (`_moe_bwd_dX_expanded_kernel`): inputs, fp32 reference, torch baseline.

d_pre_act [tokens * k, 2 * inter] is SwiGLU's gradient as Liger's previous backward kernel
leaves it (d(gate) in the first inter columns, d(up) in the rest), one row per (token,
expert) assignment in the order Liger's routing sorts them: by expert, then by token (a
stable sort of the flat top-k ids); gate_up [experts, 2 * inter, hidden] stacks every
expert's gate and up weights (gate rows first, as Liger and HF's fused experts hold them);
topk [tokens, k] (int32) says which rows belong to which expert.  The output dx_expanded
[tokens * k, hidden] is each row times its expert's stacked weight (d_gate @ W_gate +
d_up @ W_up), in the same sorted order and the model dtype, before Liger's per-token sum
of a token's k rows."""

from __future__ import annotations

import torch

from foreign.liger_moe_up_proj_wgrad.reference import biased_router_logits, seeded_generator


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
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    if k > experts - (unrouted is not None):
        raise ValueError("k must be at most the experts a token can be routed to")
    gen = seeded_generator(seed, device)
    d_pre = torch.randn(tokens * k, 2 * inter, generator=gen, device=device, dtype=dtype)
    d_pre.mul_(0.01)  # a gradient's scale
    gate_up = torch.randn(experts, 2 * inter, hidden, generator=gen, device=device, dtype=dtype)
    gate_up.mul_(hidden**-0.5)
    logits = biased_router_logits(tokens, experts, gen, device, unrouted)
    topk = torch.topk(logits, k, dim=-1).indices.to(torch.int32).contiguous()
    return d_pre, gate_up, topk


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
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """A gradient of 0.01-scaled normal values, gate/up weights at 1/sqrt(hidden) (the
    forward's unit-scale pre-activations), and routing as Qwen3-MoE's router gives it: the
    top-k of randn logits plus a per-expert bias (N(0, 0.01)), so that the experts' loads
    are uneven as a load-balanced router's are within one micro-batch (at the trials the
    busiest expert gets about 1.6 to 1.75 times the mean rows and the idlest 0.55 to 0.65).
    Drawn on the target device: the large trial's weights are 403 M values, which the CPU
    would take seconds to fill."""
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
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """As make_inputs, but no token is routed to expert experts // 2, so Liger's routing
    gives that expert no tile and the tiles of its neighbours must still be right."""
    return _inputs(
        tokens, hidden, inter, experts, k, dtype=dtype, device=device, seed=seed,
        unrouted=experts // 2,
    )  # fmt: skip


def _dgrad(
    d_pre: torch.Tensor, gate_up: torch.Tensor, topk: torch.Tensor, acc: torch.dtype
) -> torch.Tensor:
    """One GEMM per routed expert over its contiguous sorted rows, as the autograd of HF's
    expert loop computes the gradient of x @ W_gate_up[e].T."""
    expert = torch.sort(topk.flatten().long(), stable=True).values
    dx = torch.empty(d_pre.shape[0], gate_up.shape[2], dtype=acc, device=d_pre.device)
    counts = torch.bincount(expert, minlength=gate_up.shape[0]).tolist()
    start = 0
    for e, n in enumerate(counts):
        if n:
            rows = slice(start, start + n)
            dx[rows] = d_pre[rows].to(acc) @ gate_up[e].to(acc)
        start += n
    return dx


def reference(d_pre: torch.Tensor, gate_up: torch.Tensor, topk: torch.Tensor) -> torch.Tensor:
    """The products in fp32 from the rounded inputs, rounded once to the dtype."""
    return _dgrad(d_pre, gate_up, topk, torch.float32).to(d_pre.dtype)


def torch_moe_up_proj_dgrad(
    d_pre: torch.Tensor, gate_up: torch.Tensor, topk: torch.Tensor
) -> torch.Tensor:
    """HF's expert loop's input gradient in the input dtype: one cuBLAS matmul per routed
    expert over its sorted rows (a host sync for the expert counts)."""
    return _dgrad(d_pre, gate_up, topk, d_pre.dtype)
