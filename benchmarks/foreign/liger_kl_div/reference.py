"""KL divergence KL(P || Q) between a teacher's distribution P and a student's Q over an
LLM's vocabulary, for Liger's kernel: inputs, fp32 reference, torch baseline.  The student
arrives as log-probabilities and the teacher as probabilities (torch's `kl_div` convention,
`log_target=False`); the output is the loss summed over the vocabulary and averaged over
the rows (`batchmean`), in fp32 as Liger returns it."""

from __future__ import annotations

import torch
import torch.nn.functional as F

EPS = 1e-10  # Liger's clamp of the teacher's probabilities inside the log


def make_inputs(
    rows: int, vocab: int, *, dtype: torch.dtype, device: str, seed: int | None = None
) -> tuple[torch.Tensor, torch.Tensor]:
    """Student log-probabilities and teacher probabilities, from 2 * randn logits each
    (peaked, distinct distributions)."""
    gen = torch.Generator(device="cpu")
    gen.manual_seed(seed if seed is not None else int(torch.randint(0, 2**31 - 1, (1,))))
    log_q = torch.log_softmax(2.0 * torch.randn(rows, vocab, generator=gen), dim=-1)
    p = torch.softmax(2.0 * torch.randn(rows, vocab, generator=gen), dim=-1)
    return log_q.to(dtype=dtype, device=device), p.to(dtype=dtype, device=device)


def reference(log_q: torch.Tensor, p: torch.Tensor) -> torch.Tensor:
    pf = p.float()
    per_row = (pf * (torch.log(pf.clamp_min(EPS)) - log_q.float())).sum(dim=-1)
    return per_row.sum() / log_q.shape[0]


def torch_kl_div(log_q: torch.Tensor, p: torch.Tensor) -> torch.Tensor:
    """torch's F.kl_div(batchmean) in the input dtype, as a distillation loop calls it."""
    return F.kl_div(log_q, p, reduction="batchmean").float()
