"""FlagGems' soft-margin loss, mean reduction (SigLIP's pairwise sigmoid loss over an
image-text similarity block): inputs, fp64 reference, torch baseline.

scores is [images, texts] in the spec's dtype (the scaled and shifted cosine similarities
t * <img, txt> + b), targets the same shape and dtype, +1 on the diagonal (matching pairs)
and -1 elsewhere; the output is the 0-dim mean of log(1 + exp(-targets * scores)) in the
input dtype.  SigLIP's loss is the same sum divided by the batch instead of the element
count."""

from __future__ import annotations

import torch
import torch.nn.functional as F


def make_inputs(
    images: int, texts: int, *, dtype: torch.dtype, device: str, seed: int | None = None
) -> tuple[torch.Tensor, torch.Tensor]:
    """Similarities as a trained SigLIP's (temperature 10 and bias -10 on cosines): mostly
    around -10 for unmatched pairs, around +5 on the diagonal, some hard negatives."""
    gen = torch.Generator(device="cpu")
    gen.manual_seed(seed if seed is not None else int(torch.randint(0, 2**31 - 1, (1,))))
    cos = 0.1 * torch.randn(images, texts, generator=gen)
    diag = torch.arange(min(images, texts))
    cos[diag, diag] = 1.5 + 0.1 * torch.randn(diag.numel(), generator=gen)
    hard = torch.rand(images, texts, generator=gen) < 0.01
    cos[hard] += 0.8
    scores = 10.0 * cos - 10.0
    targets = -torch.ones(images, texts)
    targets[diag, diag] = 1.0
    return scores.to(dtype).to(device), targets.to(dtype).to(device)


def reference(scores: torch.Tensor, targets: torch.Tensor) -> torch.Tensor:
    """The mean of softplus(-targets * scores) in fp64, rounded once to the input dtype."""
    loss = F.softplus(-targets.double() * scores.double()).mean()
    return loss.to(scores.dtype)


def torch_soft_margin_loss(scores: torch.Tensor, targets: torch.Tensor) -> torch.Tensor:
    """The same loss by torch's F.soft_margin_loss in the input dtype."""
    return F.soft_margin_loss(scores, targets, reduction="mean")
