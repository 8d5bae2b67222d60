"""SGLang's batch-invariant log-softmax with SGLang's own launch: BLOCK_SIZE 1024 and
Triton's default 4 warps and 3 stages (SGLang passes none; no heuristic, autotuner or tuned
table), one program per row."""

from __future__ import annotations

from collections.abc import Callable

import torch

from foreign.sglang_bi_log_softmax.launcher import LogSoftmaxConfig
from foreign.sglang_bi_log_softmax.launcher import prepare as _prepare

CONFIG = LogSoftmaxConfig(block_size=None, num_warps=None, num_stages=None)


def prepare(logits: torch.Tensor) -> Callable[[], torch.Tensor]:
    """The output, outside the timed call."""
    return _prepare(CONFIG, logits)


def log_softmax(logits: torch.Tensor) -> torch.Tensor:
    return prepare(logits)()
