"""FlagGems' argmax along the last dimension (greedy decoding over the vocabulary): inputs,
reference, torch baseline.

logits is [rows, vocab] in the spec's dtype (the LM head's output); the output is the
[rows] int64 column of each row's maximum, the leftmost when several columns tie."""

from __future__ import annotations

import torch


def make_inputs(
    rows: int, vocab: int, *, dtype: torch.dtype, device: str, seed: int | None = None
) -> tuple[torch.Tensor]:
    """Normal logits scaled as a trained LM head's (std 2.5), a few tokens per row lifted
    towards the top (a peaked next-token distribution); 16-bit rounding makes ties at the
    maximum possible, which the leftmost rule settles."""
    gen = torch.Generator(device="cpu")
    gen.manual_seed(seed if seed is not None else int(torch.randint(0, 2**31 - 1, (1,))))
    logits = 2.5 * torch.randn(rows, vocab, generator=gen)
    hot = torch.randint(0, vocab, (rows, 4), generator=gen)
    logits.scatter_add_(1, hot, 8.0 + 2.0 * torch.rand(rows, 4, generator=gen))
    return (logits.to(dtype).to(device),)


def reference(logits: torch.Tensor) -> torch.Tensor:
    """The leftmost column equal to the row's maximum (a max, a compare, a min of columns)."""
    top = logits.max(dim=-1, keepdim=True).values
    cols = torch.arange(logits.shape[-1], device=logits.device).expand_as(logits)
    return torch.where(logits == top, cols, logits.shape[-1]).min(dim=-1).values


def torch_argmax(logits: torch.Tensor) -> torch.Tensor:
    """The same columns by torch.argmax."""
    return torch.argmax(logits, dim=-1)
