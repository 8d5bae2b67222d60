"""Apple's Cut Cross-Entropy LSE forward (`cce_lse_forward_kernel`, as LinearCrossEntropyFunction
calls it for `linear_cross_entropy(e, c, targets)` under training): inputs, reference, torch
baseline.

e [tokens, hidden] holds the final hidden states (after the model's last norm), c [vocab,
hidden] the classifier (unembedding) weight, both in the spec's dtype and contiguous; no
token ignored (no `valids`: every label live, as in packed pretraining with labels shifted
beforehand) and no softcap.  The outputs are each token's log-sum-exp over the vocabulary of
its logits e c^T (fp32 [tokens]) and each vocabulary entry's logit averaged over the tokens
(fp32 [vocab]: the `logit_avg` the forward returns whenever the loss needs a gradient and
filter_eps is set, as it is by default, for the backward's vocabulary ordering)."""

from __future__ import annotations

import torch


def make_inputs(
    tokens: int, hidden: int, vocab: int, *, dtype: torch.dtype, device: str,
    seed: int | None = None,
) -> tuple[torch.Tensor, torch.Tensor]:  # fmt: skip
    """Unit hidden states (a normed residual stream) and a classifier at 1/sqrt(hidden), so
    the logits are of unit scale, as a trained model's spread over a large vocabulary."""
    gen = torch.Generator(device="cpu")
    gen.manual_seed(0 if seed is None else seed)
    e = torch.randn(tokens, hidden, generator=gen)
    c = torch.randn(vocab, hidden, generator=gen) / hidden**0.5
    return e.to(dtype).to(device), c.to(dtype).to(device)


def reference(e: torch.Tensor, c: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """The logits in fp64 from the operands as given, their log-sum-exp per token and mean
    per vocabulary entry, each rounded once to fp32."""
    logits = e.to(torch.float64) @ c.to(torch.float64).T
    lse = torch.logsumexp(logits, dim=1)
    return lse.to(torch.float32), logits.mean(dim=0).to(torch.float32)


def torch_lse(e: torch.Tensor, c: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """What CCE replaces: the [tokens, vocab] logits materialized by cuBLAS in the input dtype
    (fp32 accumulation), then torch's log-sum-exp and column mean in fp32."""
    logits = (e @ c.T).float()
    return torch.logsumexp(logits, dim=1), logits.mean(dim=0)
