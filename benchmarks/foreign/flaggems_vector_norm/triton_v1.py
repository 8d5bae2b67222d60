"""FlagGems' whole-tensor L2 norm with FlagGems' own launch: a first-launch block of the
next power of two of ceil(sqrt(numel)) elements, the second launch's tile the next power of
two of the partials' count, Triton's default 4 warps for both (FlagGems passes none; no
autotune); the partials and the output made outside the timed call."""

from __future__ import annotations

from collections.abc import Callable

import torch

from foreign.flaggems_vector_norm.launcher import VectorNormConfig
from foreign.flaggems_vector_norm.launcher import prepare as _prepare

CONFIG = VectorNormConfig(block_size=None, num_warps=None, mid_warps=None)


def prepare(x: torch.Tensor) -> Callable[[], torch.Tensor]:
    """The partial buffer and the output, outside the timed call."""
    return _prepare(CONFIG, x)


def vector_norm(x: torch.Tensor) -> torch.Tensor:
    return prepare(x)()
