"""SGLang's fused MoE router for Grok (`fused_moe_router_shim` on its tensor-core path):
inputs, reference, torch baseline.

x is the MoE block's input hidden states [tokens, hidden] in the spec's dtype; the router
weight is [experts, hidden] in fp32 (Grok's gate is a ReplicatedLinear with fp32
parameters).  The outputs are the top-k experts' softmax probabilities over the
soft-capped logits (fp32, not renormalised) and their ids (int32), [tokens, topk] each.

The values lie on grids so that the router logits are exact in fp32 whatever the order of
the sum, TF32 included: x's entries are multiples of 1/4 in [-1/2, 1/2], the weight's
multiples of 1/16 in [-1/8, 1/8], so each product is a multiple of 2^-6; x's last column
is 1 and the weight's is a distinct multiple of 2^-9 below 2^-6 per expert, so no two
experts' logits of a token are equal and the top-k ids are well defined."""

from __future__ import annotations

import torch

SOFTCAP = 30.0  # Grok's router_logit_softcapping


def make_inputs(
    tokens: int, hidden: int, experts: int, topk: int, *, dtype: torch.dtype, device: str,
    seed: int | None = None,
) -> tuple[torch.Tensor, torch.Tensor, int]:  # fmt: skip
    gen = torch.Generator(device="cpu")
    gen.manual_seed(seed if seed is not None else int(torch.randint(0, 2**31 - 1, (1,))))
    x = torch.randint(-2, 3, (tokens, hidden), generator=gen).float() * 0.25
    x[:, -1] = 1.0
    w = torch.randint(-2, 3, (experts, hidden), generator=gen).float() / 16
    w[:, -1] = torch.randperm(experts, generator=gen).float() * 2.0**-9
    return x.to(dtype=dtype, device=device), w.to(device), topk


def reference(
    x: torch.Tensor, router_weight: torch.Tensor, topk: int
) -> tuple[torch.Tensor, torch.Tensor]:
    """In fp64: the logits, cap * tanh(logits / cap), the softmax over all experts, its
    top-k probabilities and their ids."""
    logits = x.double() @ router_weight.double().T
    capped = torch.tanh(logits / SOFTCAP) * SOFTCAP
    probs = torch.softmax(capped, dim=-1)
    weights, ids = torch.topk(probs, topk, dim=-1)
    return weights.float(), ids.to(torch.int32)


def torch_moe_router(
    x: torch.Tensor, router_weight: torch.Tensor, topk: int
) -> tuple[torch.Tensor, torch.Tensor]:
    """SGLang's own torch path (`FusedMoeRouter.forward_torch`) with torch's softmax and
    topk in place of its fused_topk: an fp32 GEMM, tanh soft-capping, softmax, top-k."""
    g = x.float() @ router_weight.float().T
    g = torch.tanh(g / SOFTCAP) * SOFTCAP
    weights, ids = torch.topk(torch.softmax(g, dim=-1), topk, dim=-1)
    return weights, ids.to(torch.int32)
