"""Attention residuals (Kimi's AttnRes) for Liger's kernel: inputs, fp32 reference, torch
baseline.

Instead of adding every block's output to one residual stream, a layer takes a softmax
over depth: the N earlier blocks' outputs V [N, tokens, hidden] are RMS-normed into keys
(with weight w_norm), scored against a learned pseudo-query w_query [hidden], and the
layer's input is the softmax-weighted sum of V.  The outputs are that sum h [tokens,
hidden] in the model dtype, and the per-(token, block) softmax weights and rstd [tokens,
N] in fp32 (Liger keeps both for the backward pass)."""

from __future__ import annotations

import torch

EPS = 1e-6  # liger's default


def make_inputs(
    blocks: int, tokens: int, hidden: int, *, dtype: torch.dtype, device: str,
    seed: int | None = None,
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:  # fmt: skip
    """randn block outputs at growing scales (deeper blocks larger, as a residual stream
    grows), a pseudo-query at 1/sqrt(hidden) (scores of order one) and a norm weight near 1."""
    gen = torch.Generator(device="cpu")
    gen.manual_seed(seed if seed is not None else int(torch.randint(0, 2**31 - 1, (1,))))
    scale = torch.linspace(1.0, 3.0, blocks)[:, None, None]
    v = scale * torch.randn(blocks, tokens, hidden, generator=gen)
    w_query = hidden**-0.5 * torch.randn(hidden, generator=gen) * 4.0
    w_norm = 1.0 + 0.1 * torch.randn(hidden, generator=gen)
    return tuple(t.to(dtype=dtype, device=device) for t in (v, w_query, w_norm))  # type: ignore[return-value]


def _attn_res(
    v: torch.Tensor, w_query: torch.Tensor, w_norm: torch.Tensor, acc: torch.dtype
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    vf = v.to(acc)
    rstd = torch.rsqrt(vf.pow(2).mean(-1) + EPS)  # [N, tokens]
    keys = vf * rstd[..., None] * w_norm.to(acc)
    scores = keys @ w_query.to(acc)  # [N, tokens]
    alpha = torch.softmax(scores.float(), dim=0)  # over depth
    h = (alpha.to(acc)[..., None] * vf).sum(0)
    return h.to(v.dtype), alpha.T.contiguous().float(), rstd.T.contiguous().float()


def reference(
    v: torch.Tensor, w_query: torch.Tensor, w_norm: torch.Tensor
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    return _attn_res(v, w_query, w_norm, torch.float32)


def torch_attn_res(
    v: torch.Tensor, w_query: torch.Tensor, w_norm: torch.Tensor
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """The paper's formulation in plain torch, in the input dtype: RMSNorm of every block,
    an einsum against the query, a softmax over depth, a weighted sum (several kernels, V
    read more than once)."""
    return _attn_res(v, w_query, w_norm, v.dtype)
