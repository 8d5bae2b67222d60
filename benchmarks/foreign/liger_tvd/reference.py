"""Total variation distance TVD(P, Q) = 0.5 * sum |p - q| between two distributions over an
LLM's vocabulary (a distillation loss), for Liger's kernel: inputs, fp32 reference, torch
baseline.  The outputs are the loss averaged over the rows (`batchmean`, fp32 as Liger
returns it) and its gradient with respect to p, 0.5 * sign(p - q) / rows, in the inputs'
dtype."""

from __future__ import annotations

import torch


def make_inputs(
    rows: int, vocab: int, *, dtype: torch.dtype, device: str, seed: int | None = None
) -> tuple[torch.Tensor, torch.Tensor]:
    """Two probability distributions per row, softmax of 2 * randn logits each (peaked,
    distinct)."""
    gen = torch.Generator(device="cpu")
    gen.manual_seed(seed if seed is not None else int(torch.randint(0, 2**31 - 1, (1,))))
    p = torch.softmax(2.0 * torch.randn(rows, vocab, generator=gen), dim=-1)
    q = torch.softmax(2.0 * torch.randn(rows, vocab, generator=gen), dim=-1)
    return p.to(dtype=dtype, device=device), q.to(dtype=dtype, device=device)


def reference(p: torch.Tensor, q: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    rows = p.shape[0]
    diff = p.float() - q.float()
    loss = 0.5 * diff.abs().sum() / rows
    grad = 0.5 * torch.sign(diff) / rows
    return loss, grad.to(p.dtype)


def torch_tvd(p: torch.Tensor, q: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """The loss and its gradient by torch autograd in the input dtype, as a training loop
    without Liger computes them."""
    x = p.detach().requires_grad_(True)
    loss = 0.5 * (x - q).abs().sum() / p.shape[0]
    loss.backward()
    assert x.grad is not None
    return loss.detach().float(), x.grad
