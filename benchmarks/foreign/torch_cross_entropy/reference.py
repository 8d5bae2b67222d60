"""Mean cross-entropy over an LLM's vocabulary: inputs, fp32 reference, and a baseline that
writes the log-softmax out before picking the targets."""

from __future__ import annotations

import torch
import torch.nn.functional as F


def make_inputs(
    rows: int, vocab: int, *, dtype: torch.dtype, device: str, seed: int | None = None
) -> tuple[torch.Tensor, torch.Tensor]:
    """logits [rows, vocab] and int64 targets [rows]."""
    gen = torch.Generator(device="cpu")
    gen.manual_seed(seed if seed is not None else int(torch.randint(0, 2**31 - 1, (1,))))
    logits = 2.0 * torch.randn(rows, vocab, generator=gen)
    target = torch.randint(0, vocab, (rows,), generator=gen)
    return logits.to(dtype=dtype, device=device), target.to(device)


def reference(logits: torch.Tensor, target: torch.Tensor) -> torch.Tensor:
    return F.cross_entropy(logits.float(), target).to(logits.dtype)


def fp32_upcast(logits: torch.Tensor, target: torch.Tensor) -> torch.Tensor:
    """What HF's loss functions do: upcast the logits to fp32, then F.cross_entropy."""
    return F.cross_entropy(logits.float(), target).to(logits.dtype)
