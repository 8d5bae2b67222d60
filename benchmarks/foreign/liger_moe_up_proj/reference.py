"""The up-projection of a mixture-of-experts MLP, fused with SwiGLU, for Liger's grouped
GEMM: inputs, fp32 reference, torch baseline.

x [tokens, hidden] in the model dtype, every expert's gate and up weights stacked as
gate_up [experts, 2 * inter, hidden] (gate rows first, as Liger and HF's fused experts
hold them), and each token's top-k experts [tokens, k] (int32, from a router's top-k over
random logits).  The outputs are row-per-assignment, sorted by expert and, within an
expert, by token (the order Liger's routing gives): the pre-activations [tokens * k,
2 * inter] (x @ gate^T, x @ up^T) and silu(gate) * up [tokens * k, inter]."""

from __future__ import annotations

import torch
import torch.nn.functional as F


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
    """randn activations, weights at 1/sqrt(hidden) (unit-scale outputs), and routing by the
    top-k of randn router logits.  Drawn on the target device: the weights of a real MoE
    layer are ~1 GB, which the CPU would take seconds to fill."""
    gen = torch.Generator(device=device)
    gen.manual_seed(seed if seed is not None else int(torch.randint(0, 2**31 - 1, (1,))))
    x = torch.randn(tokens, hidden, generator=gen, device=device, dtype=dtype)
    gate_up = torch.randn(experts, 2 * inter, hidden, generator=gen, device=device, dtype=dtype)
    gate_up.mul_(hidden**-0.5)
    router = torch.randn(tokens, experts, generator=gen, device=device)
    topk = torch.topk(router, k, dim=-1).indices.to(torch.int32)
    return x, gate_up, topk


def _sorted_assignments(topk: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """(token, expert) of each assignment, sorted by expert, then by token."""
    flat = topk.flatten().long()
    order = torch.argsort(flat, stable=True)
    return order // topk.shape[1], flat[order]


def _up_proj(
    x: torch.Tensor, gate_up: torch.Tensor, topk: torch.Tensor, acc: torch.dtype
) -> tuple[torch.Tensor, torch.Tensor]:
    token, expert = _sorted_assignments(topk)
    pre = torch.empty(len(token), gate_up.shape[1], dtype=acc, device=x.device)
    for e in torch.unique(expert).tolist():  # one GEMM per expert, as HF's expert loop
        rows = (expert == e).nonzero()[:, 0]
        pre[rows] = (x[token[rows]].to(acc) @ gate_up[e].to(acc).T).to(acc)
    gate, up = pre.chunk(2, dim=-1)
    return pre, F.silu(gate) * up


def reference(
    x: torch.Tensor, gate_up: torch.Tensor, topk: torch.Tensor
) -> tuple[torch.Tensor, torch.Tensor]:
    pre, post = _up_proj(x, gate_up, topk, torch.float32)
    return pre.to(x.dtype), post.to(x.dtype)


def torch_moe_up_proj(
    x: torch.Tensor, gate_up: torch.Tensor, topk: torch.Tensor
) -> tuple[torch.Tensor, torch.Tensor]:
    """HF's expert loop in the input dtype: a gather and one matmul per routed expert, then
    SwiGLU (element-wise kernels)."""
    pre, post = _up_proj(x, gate_up, topk, x.dtype)
    return pre, post
