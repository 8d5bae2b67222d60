"""The down-projection of a mixture-of-experts MLP, for Liger's grouped GEMM: inputs, fp32
reference, torch baseline.

act [tokens * k, inter] is the up projection's silu(gate) * up, one row per (token,
expert) assignment in the order Liger's routing sorts them (by expert, then by token);
down [experts, hidden, inter] stacks every expert's down weight (as Liger and HF's fused
experts hold them); topk [tokens, k] (int32, from a router's top-k over random logits)
says which rows belong to which expert.  The output Y [tokens * k, hidden] is each row
times its expert's down weight, transposed, in the same sorted order, before the routing
weights and the per-token sum."""

from __future__ import annotations

import torch


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
    """randn activations, weights at 1/sqrt(inter) (unit-scale outputs), and routing by the
    top-k of randn router logits.  Drawn on the target device: the large trial's weights
    are 470 M values, which the CPU would take seconds to fill."""
    gen = torch.Generator(device=device)
    gen.manual_seed(seed if seed is not None else int(torch.randint(0, 2**31 - 1, (1,))))
    act = torch.randn(tokens * k, inter, generator=gen, device=device, dtype=dtype)
    down = torch.randn(experts, hidden, inter, generator=gen, device=device, dtype=dtype)
    down.mul_(inter**-0.5)
    router = torch.randn(tokens, experts, generator=gen, device=device)
    topk = torch.topk(router, k, dim=-1).indices.to(torch.int32)
    return act, down, topk


def _sorted_experts(topk: torch.Tensor) -> torch.Tensor:
    """The expert of each sorted assignment row (by expert, then by token)."""
    return torch.sort(topk.flatten().long(), stable=True).values


def _down_proj(
    act: torch.Tensor, down: torch.Tensor, topk: torch.Tensor, acc: torch.dtype
) -> torch.Tensor:
    expert = _sorted_experts(topk)
    y = torch.empty(act.shape[0], down.shape[1], dtype=acc, device=act.device)
    for e in torch.unique(expert).tolist():  # one GEMM per expert, as HF's expert loop
        rows = (expert == e).nonzero()[:, 0]
        y[rows] = act[rows].to(acc) @ down[e].to(acc).T
    return y


def reference(act: torch.Tensor, down: torch.Tensor, topk: torch.Tensor) -> torch.Tensor:
    return _down_proj(act, down, topk, torch.float32).to(act.dtype)


def torch_moe_down_proj(act: torch.Tensor, down: torch.Tensor, topk: torch.Tensor) -> torch.Tensor:
    """HF's expert loop in the input dtype: one matmul per routed expert over its rows."""
    return _down_proj(act, down, topk, act.dtype)
