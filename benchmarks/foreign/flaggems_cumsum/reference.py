"""FlagGems' cumsum along the last dimension (top-p sampling's running total of sorted
probabilities): inputs, fp64 reference, torch baseline.

probs is [rows, vocab] fp32 whatever the spec's dtype (vLLM's sampler works on fp32
logits), each row a softmax sorted ascending as vLLM's top-p sorts it; the output is the
[rows, vocab] fp32 inclusive prefix sum of each row."""

from __future__ import annotations

import torch


def make_inputs(
    rows: int, vocab: int, *, dtype: torch.dtype, device: str, seed: int | None = None
) -> tuple[torch.Tensor]:
    """Softmaxes of logits with a standard normal's scale 3 (a few tokens hold most of the
    mass), sorted ascending: the running totals climb slowly, then jump to 1."""
    del dtype  # fp32 whatever the dtype: the sampler's probabilities are fp32
    gen = torch.Generator(device="cpu")
    gen.manual_seed(seed if seed is not None else int(torch.randint(0, 2**31 - 1, (1,))))
    logits = 3.0 * torch.randn(rows, vocab, generator=gen)
    probs = torch.softmax(logits, dim=-1).sort(dim=-1).values
    return (probs.to(device),)


def reference(probs: torch.Tensor) -> torch.Tensor:
    """An fp64 cumsum, rounded once to fp32."""
    return probs.double().cumsum(dim=-1).float()


def torch_cumsum(probs: torch.Tensor) -> torch.Tensor:
    """The same scan by torch (what vLLM's `apply_top_k_top_p` calls: probs_sort.cumsum)."""
    return probs.cumsum(dim=-1)
