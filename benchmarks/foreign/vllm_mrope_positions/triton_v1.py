"""vLLM's M-RoPE position preparation with vLLM's own launch: 1024 tokens per loop step
(fixed in `RopeState.prepare_positions`), Triton's default 4 warps and 3 stages (vLLM passes
neither; no heuristic, autotuner or tuned table); the positions buffer is the runner's
persistent one, written in place."""

from __future__ import annotations

from collections.abc import Callable

import torch

from foreign.vllm_mrope_positions.launcher import MropePositionsConfig
from foreign.vllm_mrope_positions.launcher import prepare as _prepare

CONFIG = MropePositionsConfig(block=None, num_warps=None, num_stages=None)


def prepare(*inputs: torch.Tensor) -> Callable[[], torch.Tensor]:
    """Nothing to make: the kernel writes the persistent positions buffer in place."""
    return _prepare(CONFIG, *inputs)


def prepare_positions(*inputs: torch.Tensor) -> torch.Tensor:
    return prepare(*inputs)()
