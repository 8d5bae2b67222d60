"""SGLang's final-logit soft-capping (`fused_softcap` as its logits processor calls it, in
place): inputs, reference, torch baseline.

logits is [rows, vocab] in the spec's dtype (the LM head's output: SGLang caps the logits
before casting them to fp32 for the sampler); cap is Gemma 2's final_logit_softcapping,
30.0.  The output is cap * tanh(logits / cap), written into the logits."""

from __future__ import annotations

import torch

GEMMA2_FINAL_LOGIT_SOFTCAP = 30.0


def make_inputs(
    rows: int, vocab: int, *, dtype: torch.dtype, device: str, seed: int | None = None
) -> tuple[torch.Tensor, float]:
    """Normal logits with a standard deviation of 10 (a few reach past the cap), and the
    cap."""
    gen = torch.Generator(device="cpu")
    gen.manual_seed(seed if seed is not None else int(torch.randint(0, 2**31 - 1, (1,))))
    logits = torch.randn(rows, vocab, generator=gen) * 10.0
    return logits.to(dtype=dtype, device=device), GEMMA2_FINAL_LOGIT_SOFTCAP


def reference(logits: torch.Tensor, cap: float) -> torch.Tensor:
    """torch.tanh in fp64 on a copy, rounded to the logits' dtype."""
    return (cap * torch.tanh(logits.double() / cap)).to(logits.dtype)


def torch_softcap(logits: torch.Tensor, cap: float) -> torch.Tensor:
    """The same by torch ops in place: divide, tanh, multiply."""
    logits.div_(cap)
    logits.tanh_()
    logits.mul_(cap)
    return logits
