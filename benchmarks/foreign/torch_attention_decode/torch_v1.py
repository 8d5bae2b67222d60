"""Naive attention decode in plain torch, as a model file would write it: scores = q k^T,
scale, softmax in fp32, back to the input dtype, times v (five kernel launches, the
[b, h, 1, t] score matrix written and read between them)."""

from __future__ import annotations

import torch


def attention_decode(
    q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, scale: float
) -> torch.Tensor:
    scores = torch.matmul(q, k.transpose(-1, -2)) * scale
    p = torch.softmax(scores.float(), dim=-1).to(q.dtype)
    return torch.matmul(p, v)
