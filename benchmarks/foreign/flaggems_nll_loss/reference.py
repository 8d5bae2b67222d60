"""FlagGems' NLL loss forward with a mean reduction (`nll_loss` on [N, C], its
`nll_loss_forward_kernel` path), the loss of a causal LM's training step after its
log-softmax: inputs, reference, torch baseline.

logp is [tokens, vocab] in the spec's dtype (the log-softmax of the LM head's logits), and
target is int64 [tokens], the next token of each position or -100 (torch's ignore index)
for the positions the loss skips (prompt tokens of an SFT sample, padding).  The output is
the 0-dim mean over the kept tokens of -logp[token, target], in the input dtype."""

from __future__ import annotations

import torch
import torch.nn.functional as F

IGNORE_INDEX = -100
IGNORED_FRACTION = 0.25  # positions whose target is the ignore index


def make_inputs(
    tokens: int, vocab: int, *, dtype: torch.dtype, device: str, seed: int | None = None
) -> tuple[torch.Tensor, torch.Tensor]:
    """Log-probabilities uniform in [-16, 0) (made on the device: the large trial's matrix is
    4.2 GB), the target's own log-probability in [-4, 0) as a trained model gives it (a loss
    near 2), a quarter of the positions ignored at random."""
    seed = seed if seed is not None else int(torch.randint(0, 2**31 - 1, (1,)))
    gen = torch.Generator(device="cpu")
    gen.manual_seed(seed)
    target = torch.randint(0, vocab, (tokens,), generator=gen, dtype=torch.int64)
    ignored = torch.rand(tokens, generator=gen) < IGNORED_FRACTION
    ignored[0] = False  # at least one kept token, whatever the dims
    picked = -4.0 * torch.rand(tokens, generator=gen)
    dgen = torch.Generator(device=device)
    dgen.manual_seed(seed)
    logp = torch.empty(tokens, vocab, dtype=dtype, device=device).uniform_(
        -16.0, 0.0, generator=dgen
    )
    rows = torch.arange(tokens, device=device)
    logp[rows, target.to(device)] = picked.to(dtype=dtype, device=device)
    target[ignored] = IGNORE_INDEX
    return logp, target.to(device)


def reference(logp: torch.Tensor, target: torch.Tensor) -> torch.Tensor:
    """The kept tokens' log-probabilities gathered by index in fp64, their negated mean
    rounded once to the input dtype."""
    kept = (target != IGNORE_INDEX).nonzero().flatten()
    picked = logp[kept, target[kept]].double()
    return (-picked.sum() / kept.numel()).to(logp.dtype)


def torch_nll_loss(logp: torch.Tensor, target: torch.Tensor) -> torch.Tensor:
    """The same loss by torch's F.nll_loss in the input dtype."""
    return F.nll_loss(logp, target, ignore_index=IGNORE_INDEX, reduction="mean")
