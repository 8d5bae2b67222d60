"""F.cross_entropy(logits, target) with the mean reduction, in the logits' dtype, as a
training or evaluation loop calls it: torch launches its log-softmax kernel (writing the
[rows, vocab] log-probabilities), its NLL kernel and the reduction."""

from __future__ import annotations

import torch
import torch.nn.functional as F


def cross_entropy(logits: torch.Tensor, target: torch.Tensor) -> torch.Tensor:
    return F.cross_entropy(logits, target)
