"""vLLM's split-vocabulary greedy argmax (the `greedy_argmax` of vLLM's GPU model runner,
which its speculators call to pick greedy draft tokens): inputs, reference, torch baseline.

logits is [rows, vocab] in the spec's dtype (a draft model's LM-head output); the output is
the [rows] int64 column of each row's maximum, NaN counted as -inf, the leftmost when
several columns tie."""

from __future__ import annotations

import torch


def make_inputs(
    rows: int, vocab: int, *, dtype: torch.dtype, device: str, seed: int | None = None
) -> tuple[torch.Tensor]:
    """Normal logits scaled as a trained LM head's (std 2.5), drawn on the device, a few
    columns per row lifted towards the top (a peaked next-token distribution) and one
    logit in 4096 set to NaN (which must lose); 16-bit rounding makes ties at the maximum
    possible, which the leftmost rule settles."""
    seed = seed if seed is not None else int(torch.randint(0, 2**31 - 1, (1,)))
    gen = torch.Generator(device=device)
    gen.manual_seed(seed)
    logits = 2.5 * torch.randn(rows, vocab, generator=gen, device=device)
    hot = torch.randint(0, vocab, (rows, 4), generator=gen, device=device)
    lift = 8.0 + 2.0 * torch.rand(rows, 4, generator=gen, device=device)
    logits.scatter_add_(1, hot, lift)
    nan = torch.rand(rows, vocab, generator=gen, device=device) < 1.0 / 4096
    logits = logits.masked_fill(nan, float("nan"))
    return (logits.to(dtype).contiguous(),)


def reference(logits: torch.Tensor) -> torch.Tensor:
    """NaN to -inf, then the leftmost column equal to the row's maximum (a max, a
    compare, a min of columns)."""
    x = logits.float().masked_fill(logits.isnan(), float("-inf"))
    top = x.max(dim=-1, keepdim=True).values
    cols = torch.arange(x.shape[-1], device=x.device).expand_as(x)
    return torch.where(x == top, cols, x.shape[-1]).min(dim=-1).values


def torch_argmax(logits: torch.Tensor) -> torch.Tensor:
    """vLLM's own fallback: NaN filled with -inf, then torch.argmax."""
    return logits.masked_fill(logits.isnan(), float("-inf")).argmax(dim=-1)
