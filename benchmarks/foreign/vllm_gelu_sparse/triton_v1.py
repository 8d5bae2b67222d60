"""vLLM's Gemma 3n activation-sparsity GELU-and-mul with vLLM's own launch: a whole row a
program (BLOCK_SIZE = next_power_of_2(d)), min(max(BLOCK_SIZE / 256, 1), 8) warps, Triton's
default 3 stages (vLLM passes none; no autotuner or tuned table); the output made outside
the timed call."""

from __future__ import annotations

from collections.abc import Callable

import torch

from foreign.vllm_gelu_sparse.launcher import GeluSparseConfig
from foreign.vllm_gelu_sparse.launcher import prepare as _prepare

CONFIG = GeluSparseConfig(block=None, num_warps=None, num_stages=None)


def prepare(x: torch.Tensor, std_multiplier: float) -> Callable[[], torch.Tensor]:
    """The output, outside the timed call."""
    return _prepare(CONFIG, x, std_multiplier)


def gelu_sparse(x: torch.Tensor, std_multiplier: float) -> torch.Tensor:
    return prepare(x, std_multiplier)()
