"""SGLang's final-logit soft-capping with SGLang's own launch: 1024 elements per program
(BLOCK_SIZE fixed in `fused_softcap`), Triton's default 4 warps (SGLang passes none; no
heuristic, autotuner or tuned table)."""

from __future__ import annotations

from collections.abc import Callable

import torch

from foreign.sglang_logit_softcap.launcher import SoftcapConfig
from foreign.sglang_logit_softcap.launcher import prepare as _prepare

CONFIG = SoftcapConfig(block_size=None, num_warps=None)


def prepare(logits: torch.Tensor, cap: float) -> Callable[[], torch.Tensor]:
    """The grid, outside the timed call."""
    return _prepare(CONFIG, logits, cap)


def softcap(logits: torch.Tensor, cap: float) -> torch.Tensor:
    return prepare(logits, cap)()
