"""vLLM's Hadamard transform by MMA with vLLM's own launch: 16 rows per program, 4 warps,
1 stage (all fixed in `_triton_hadamard_transform`; no heuristic, autotuner or tuned
table); the work-dtype rows, the cached Hadamard matrix and the output made outside the
timed call."""

from __future__ import annotations

from collections.abc import Callable

import torch

from foreign.vllm_hadamard_mma.launcher import HadamardMmaConfig
from foreign.vllm_hadamard_mma.launcher import prepare as _prepare

CONFIG = HadamardMmaConfig(block_m=None, num_warps=None, num_stages=None)


def prepare(x: torch.Tensor) -> Callable[[], torch.Tensor]:
    """The work-dtype rows, the Hadamard matrix and the output, outside the timed call."""
    return _prepare(CONFIG, x)


def transform(x: torch.Tensor) -> torch.Tensor:
    return prepare(x)()
