"""vLLM's split-vocabulary greedy argmax with vLLM's own launch: 4096-column partial
programs (splits = cdiv(vocab, 4096)) with 4 warps, a finish program per row with 1 warp,
Triton's default stages (fixed in `greedy_argmax`; no heuristic, autotuner or tuned
table); the output and the [rows, splits] scratch made outside the timed call."""

from __future__ import annotations

from collections.abc import Callable

import torch

from foreign.vllm_greedy_argmax.launcher import GreedyArgmaxConfig
from foreign.vllm_greedy_argmax.launcher import prepare as _prepare

CONFIG = GreedyArgmaxConfig(block=None, num_warps=None, finish_warps=None)


def prepare(logits: torch.Tensor) -> Callable[[], torch.Tensor]:
    """The output and the partial maxima's scratch, outside the timed call."""
    return _prepare(CONFIG, logits)


def argmax(logits: torch.Tensor) -> torch.Tensor:
    return prepare(logits)()
