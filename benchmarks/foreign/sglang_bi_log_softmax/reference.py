"""SGLang's batch-invariant log-softmax (deterministic inference's aten::_log_softmax, the
`torch.log_softmax` of the sampler's RL on-policy path): inputs, reference, torch baseline.

logits is a contiguous [rows, vocab] tensor in the spec's dtype: one row per request of the
decode step, the temperature-divided logits that the on-policy path rounds to bf16 before
its log-softmax.  The output is [rows, vocab] log-probabilities in the same dtype."""

from __future__ import annotations

import torch


def make_inputs(
    rows: int, vocab: int, *, dtype: torch.dtype, device: str, seed: int | None = None
) -> tuple[torch.Tensor]:
    """Normal logits times 3 with one token per row raised by 12 (a next-token distribution
    with a clear favourite and a long tail, as a language model's are).  Drawn on the
    device."""
    gen = torch.Generator(device=device)
    gen.manual_seed(seed if seed is not None else int(torch.randint(0, 2**31 - 1, (1,))))
    logits = torch.randn(rows, vocab, generator=gen, device=device) * 3.0
    top = torch.randint(0, vocab, (rows, 1), generator=gen, device=device)
    logits.scatter_add_(1, top, torch.full((rows, 1), 12.0, device=device))
    return (logits.to(dtype),)


def reference(logits: torch.Tensor) -> torch.Tensor:
    """In fp64: x - max - log(sum(exp(x - max))) over each row, as fp32."""
    return torch.log_softmax(logits.double(), dim=-1).float()


def torch_log_softmax(logits: torch.Tensor) -> torch.Tensor:
    """torch.log_softmax over the last dimension, as SGLang runs it without deterministic
    inference (one cuDNN/ATen launch, fp32 accumulation, output in the input dtype)."""
    return torch.log_softmax(logits, dim=-1)
