"""The gate/up weight gradient of a mixture-of-experts MLP, for Liger's fused MoE backward
(`_moe_bwd_dW1_kernel`): inputs, fp32 reference, torch baseline.

x [tokens, hidden] is the layer input the forward saved, in the model dtype; d_pre_act
[tokens * k, 2 * inter] is the gradient of the up projection's pre-activations (the SwiGLU
backward's d(gate) columns, then its d(up) columns), one row per (token, expert)
assignment in the order Liger's routing sorts them: by expert, then by token (a stable
sort of the flat top-k ids); topk [tokens, k] (int32) is each token's experts, and experts
the layer's expert count (a Python int: the gradient has a slab per expert, routed or
not).  The output dW1 [experts, 2 * inter, hidden] is, for each expert, its rows of
d_pre_act transposed times the x rows of the tokens routed to it, in the model dtype; an
expert no token was routed to gets zeros (Liger allocates the gradient with
torch.zeros_like)."""

from __future__ import annotations

import torch


def seeded_generator(seed: int | None, device: str) -> torch.Generator:
    """A generator on `device`, seeded with `seed` or, without one, at random."""
    gen = torch.Generator(device=device)
    gen.manual_seed(seed if seed is not None else int(torch.randint(0, 2**31 - 1, (1,))))
    return gen


def biased_router_logits(
    tokens: int, experts: int, gen: torch.Generator, device: str, unrouted: int | None
) -> torch.Tensor:
    """randn router logits plus a per-expert bias (N(0, 0.01)), so the experts' loads are
    uneven as a load-balanced router's are within one micro-batch; expert `unrouted`, when
    given, gets no token.  Also the routing of Liger's MoE down-projection backward."""
    bias = 0.1 * torch.randn(experts, generator=gen, device=device)
    logits = torch.randn(tokens, experts, generator=gen, device=device) + bias
    if unrouted is not None:
        logits[:, unrouted] = float("-inf")
    return logits


def renormalised_top_k(
    logits: torch.Tensor, k: int, dtype: torch.dtype
) -> tuple[torch.Tensor, torch.Tensor]:
    """Each token's k experts (int32) and their routing weights in `dtype`: the top k of the
    softmax of `logits`, renormalised to sum to one per token (Qwen3-MoE's router).  Also the
    routing of Liger's MoE down-projection backward and token combine."""
    top = torch.topk(torch.softmax(logits, dim=-1), k, dim=-1)
    weights = (top.values / top.values.sum(dim=-1, keepdim=True)).to(dtype).contiguous()
    return top.indices.to(torch.int32).contiguous(), weights


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
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor, int]:
    if k > experts - (unrouted is not None):
        raise ValueError("k must be at most the experts a token can be routed to")
    gen = seeded_generator(seed, device)
    x = torch.randn(tokens, hidden, generator=gen, device=device, dtype=dtype)
    d_pre = torch.randn(tokens * k, 2 * inter, generator=gen, device=device, dtype=dtype)
    d_pre.mul_(0.01)  # a gradient's scale
    router = biased_router_logits(tokens, experts, gen, device, unrouted)
    topk = torch.topk(router, k, dim=-1).indices.to(torch.int32).contiguous()
    return x, d_pre, topk, experts


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
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor, int]:
    """randn activations, a gradient of 0.01-scaled normal values, and routing by the
    top-k of randn router logits plus a per-expert bias (N(0, 0.01)), so that the experts'
    loads are uneven as a load-balanced router's are within one micro-batch: at both
    trials the busiest expert gets about 1.7 times the mean rows and the idlest about 0.6
    times.  Drawn on the target device: the large trial's gradient input is 201 M values,
    which the CPU would take seconds to fill."""
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
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor, int]:
    """As make_inputs, but no token is routed to expert experts // 2, so the kernel's early
    exit for an empty expert is taken and its slab of the gradient must stay zero."""
    return _inputs(
        tokens, hidden, inter, experts, k, dtype=dtype, device=device, seed=seed,
        unrouted=experts // 2,
    )  # fmt: skip


def _sorted_assignments(topk: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """(token, expert) of each assignment, sorted by expert, then by token: the row order
    of d_pre_act."""
    flat = topk.flatten().long()
    order = torch.argsort(flat, stable=True)
    return order // topk.shape[1], flat[order]


def _wgrad(
    x: torch.Tensor, d_pre: torch.Tensor, topk: torch.Tensor, experts: int, acc: torch.dtype
) -> torch.Tensor:
    """One GEMM per routed expert: its d_pre_act rows, transposed, times its tokens' x rows
    (as the autograd of HF's expert loop computes each expert's weight gradient); zeros for
    the rest."""
    token, expert = _sorted_assignments(topk)
    out = torch.zeros(experts, d_pre.shape[1], x.shape[1], dtype=acc, device=x.device)
    counts = torch.bincount(expert, minlength=experts).tolist()
    start = 0
    for e, n in enumerate(counts):
        if n:
            rows = slice(start, start + n)
            out[e] = d_pre[rows].to(acc).T @ x[token[rows]].to(acc)
        start += n
    return out


def reference(
    x: torch.Tensor, d_pre: torch.Tensor, topk: torch.Tensor, experts: int
) -> torch.Tensor:
    """The per-expert products in fp32 from the rounded inputs, rounded once to the dtype."""
    return _wgrad(x, d_pre, topk, experts, torch.float32).to(x.dtype)


def torch_moe_up_proj_wgrad(
    x: torch.Tensor, d_pre: torch.Tensor, topk: torch.Tensor, experts: int
) -> torch.Tensor:
    """HF's expert loop's weight gradient in the input dtype: a gather of each routed
    expert's token rows and one cuBLAS matmul per expert into a zeroed gradient (a host
    sync for the expert counts)."""
    return _wgrad(x, d_pre, topk, experts, x.dtype)
