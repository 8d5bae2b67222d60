"""FlagGems' soft-margin loss (mean) with FlagGems' own launch (1024 elements per program,
Triton's default 4 warps: fixed in its wrapper, no heuristic or tuning entry); the fp32
scalar allocated outside the timed call, its zero-fill, the division and the cast timed."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import torch

from foreign.flaggems_soft_margin_loss.launcher import SoftMarginLossConfig
from foreign.flaggems_soft_margin_loss.launcher import prepare as _prepare

# soft_margin_loss's BLOCK_SIZE = 1024, set in its wrapper; no warps passed
CONFIG = SoftMarginLossConfig(block_size=None, num_warps=None)


def prepare(scores: torch.Tensor, targets: torch.Tensor) -> Callable[[], Any]:
    """The fp32 scalar, outside the timed call."""
    return _prepare(CONFIG, scores, targets)


def soft_margin_loss(scores: torch.Tensor, targets: torch.Tensor) -> Any:
    return prepare(scores, targets)()
