"""FlagGems' quantile of short rows with FlagGems' own launch: the row and quantile tiles
padded to powers of two (128 and 2 here) and Triton's default 4 warps (FlagGems passes
none, and has no heuristic or tuning entry for it); the output made outside the timed
call."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import torch

from foreign.flaggems_quantile.launcher import QuantileConfig
from foreign.flaggems_quantile.launcher import prepare as _prepare

# quantile's bitonic path passes no num_warps: Triton's default 4
CONFIG = QuantileConfig(num_warps=None)


def prepare(groups: torch.Tensor, q: torch.Tensor) -> Callable[[], Any]:
    """The output, outside the timed call."""
    return _prepare(CONFIG, groups, q)


def quantile(groups: torch.Tensor, q: torch.Tensor) -> Any:
    return prepare(groups, q)()
