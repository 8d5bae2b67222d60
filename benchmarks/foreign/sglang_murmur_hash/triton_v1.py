"""SGLang's seeded-sampling MurmurHash3 with SGLang's own launch (`murmur_hash32`): one
program per row and 1024 columns, Triton's default 4 warps (SGLang passes none; no
heuristic, autotuner or tuned table)."""

from __future__ import annotations

from collections.abc import Callable

import torch

from foreign.sglang_murmur_hash.launcher import MurmurHashConfig
from foreign.sglang_murmur_hash.launcher import prepare as _prepare

CONFIG = MurmurHashConfig(block_size=None, num_warps=None)


def prepare(
    seed: torch.Tensor, positions: torch.Tensor, cols: torch.Tensor
) -> Callable[[], torch.Tensor]:
    """The uint32 output, outside the timed call."""
    return _prepare(CONFIG, seed, positions, cols)


def murmur_hash32(seed: torch.Tensor, positions: torch.Tensor, cols: torch.Tensor) -> torch.Tensor:
    return prepare(seed, positions, cols)()
