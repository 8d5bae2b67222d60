"""xFormers' scaled index add with xFormers' own launch: `scaled_index_add_fwd`'s fixed tile
of 1 source row x 1 token x 512 channels a program and Triton's default 4 warps (the wrapper
passes none; no autotuner or heuristic), a 3-D grid of kept x tokens x cdiv(channels, 512)
programs; the output buffer made outside the timed call."""

from __future__ import annotations

from collections.abc import Callable

import torch

from foreign.xformers_scaled_index_add.launcher import ScaledIndexAddConfig
from foreign.xformers_scaled_index_add.launcher import prepare as _prepare

CONFIG = ScaledIndexAddConfig(block_index=None, block_row=None, block_col=None, num_warps=None)


def prepare(
    x: torch.Tensor, index: torch.Tensor, source: torch.Tensor, scaling: torch.Tensor,
    alpha: float,
) -> Callable[[], torch.Tensor]:  # fmt: skip
    """The output buffer, outside the timed call."""
    return _prepare(CONFIG, x, index, source, scaling, alpha)


def scaled_index_add(
    x: torch.Tensor, index: torch.Tensor, source: torch.Tensor, scaling: torch.Tensor,
    alpha: float,
) -> torch.Tensor:  # fmt: skip
    return prepare(x, index, source, scaling, alpha)()
