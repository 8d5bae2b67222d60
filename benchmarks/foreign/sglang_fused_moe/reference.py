"""The first GEMM of a mixture-of-experts layer (SGLang's `fused_moe_kernel` as its
`fused_experts` launches it for w1, unquantized): inputs, fp32 reference, torch baseline.
x is [tokens, hidden], w1 [experts, n, hidden] (n = 2 x the expert's intermediate size,
gate and up stacked), topk_ids [tokens, topk] int32 (distinct experts per token); the output
is [tokens * topk, n], row t * topk + s = x[t] @ w1[topk_ids[t, s]]^T, in the input dtype."""

from __future__ import annotations

import torch


def make_inputs(
    tokens: int, hidden: int, inter: int, experts: int, topk: int, *,
    dtype: torch.dtype, device: str, seed: int | None = None,
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:  # fmt: skip
    """Unit hidden states, weights at 1/sqrt(hidden), and uniform routing: each token's
    topk distinct experts drawn at random (what a router's top-k does to balanced scores)."""
    gen = torch.Generator(device="cpu")
    gen.manual_seed(seed if seed is not None else int(torch.randint(0, 2**31 - 1, (1,))))
    x = torch.randn(tokens, hidden, generator=gen)
    w1 = torch.randn(experts, 2 * inter, hidden, generator=gen) / hidden**0.5
    scores = torch.rand(tokens, experts, generator=gen)
    topk_ids = scores.topk(topk, dim=-1).indices.to(torch.int32)
    return (
        x.to(dtype=dtype, device=device),
        w1.to(dtype=dtype, device=device),
        topk_ids.to(device),
    )


def _moe_gemm(
    x: torch.Tensor, w1: torch.Tensor, topk_ids: torch.Tensor, acc: torch.dtype
) -> torch.Tensor:
    tokens, topk = topk_ids.shape
    out = torch.empty((tokens * topk, w1.shape[1]), device=x.device, dtype=acc)
    flat = topk_ids.flatten().long()
    rows = x.to(acc).repeat_interleave(topk, dim=0)
    for e in torch.unique(flat).tolist():
        sel = (flat == e).nonzero().flatten()
        out[sel] = rows[sel] @ w1[e].to(acc).T
    return out


def reference(x: torch.Tensor, w1: torch.Tensor, topk_ids: torch.Tensor) -> torch.Tensor:
    return _moe_gemm(x, w1, topk_ids, torch.float32)


def torch_moe_gemm(x: torch.Tensor, w1: torch.Tensor, topk_ids: torch.Tensor) -> torch.Tensor:
    """The same products by torch's matmul, one per expert that received tokens (a host
    loop over the experts, as a naive MoE layer does)."""
    return _moe_gemm(x, w1, topk_ids, x.dtype)
