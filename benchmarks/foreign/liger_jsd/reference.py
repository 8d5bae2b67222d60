"""Generalized Jensen-Shannon divergence (beta 0.5) between a student's and a teacher's
token distributions, for Liger's kernel: inputs, fp32 reference, torch baseline.  Both
arrive as log-probabilities [rows, vocab] (what a distillation loss receives after the two
log-softmaxes); the outputs are the loss summed over the vocabulary and averaged over the
rows, and its gradient with respect to the student's log-probabilities."""

from __future__ import annotations

import torch

BETA = 0.5  # Liger's default: the symmetric JSD


def make_inputs(
    rows: int, vocab: int, *, dtype: torch.dtype, device: str, seed: int | None = None
) -> tuple[torch.Tensor, torch.Tensor]:
    """Student and teacher log-probabilities, log_softmax of 2 * randn (peaked, distinct)."""
    gen = torch.Generator(device="cpu")
    gen.manual_seed(seed if seed is not None else int(torch.randint(0, 2**31 - 1, (1,))))
    student = torch.log_softmax(2.0 * torch.randn(rows, vocab, generator=gen), dim=-1)
    teacher = torch.log_softmax(2.0 * torch.randn(rows, vocab, generator=gen), dim=-1)
    return student.to(dtype=dtype, device=device), teacher.to(dtype=dtype, device=device)


def _jsd(x: torch.Tensor, y: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """Loss (a 0-d tensor) and d loss / d x, in the dtype of x and y."""
    rows = x.shape[0]
    q, p = x.exp(), y.exp()
    log_m = torch.log(BETA * p + (1 - BETA) * q)
    student_term = (1 - BETA) * q * (x - log_m)
    loss = (BETA * p * (y - log_m) + student_term).sum() / rows
    return loss, student_term / rows


def reference(student: torch.Tensor, teacher: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    loss, grad = _jsd(student.float(), teacher.float())
    return loss.to(student.dtype), grad.to(student.dtype)


def torch_jsd(student: torch.Tensor, teacher: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """The same formula in plain torch autograd, fp32 inside (a distillation loop's code)."""
    x = student.detach().float().requires_grad_(True)
    q, p = x.exp(), teacher.float().exp()
    log_m = torch.log(BETA * p + (1 - BETA) * q)
    loss = (BETA * p * (teacher.float() - log_m) + (1 - BETA) * q * (x - log_m)).sum() / x.shape[0]
    loss.backward()
    assert x.grad is not None
    return loss.detach().to(student.dtype), x.grad.to(student.dtype)
