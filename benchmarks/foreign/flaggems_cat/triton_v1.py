"""FlagGems' cat with FlagGems' own launch: 1024 input elements per program (BLOCK fixed in
`cat`), Triton's default 4 warps (FlagGems passes none; no heuristic, autotuner or tuned
table); the output made outside the timed call."""

from __future__ import annotations

from collections.abc import Callable

import torch

from foreign.flaggems_cat.launcher import CatConfig
from foreign.flaggems_cat.launcher import prepare as _prepare

CONFIG = CatConfig(block_x=None, num_warps=None)


def prepare(q_nope: torch.Tensor, q_pe: torch.Tensor) -> Callable[[], torch.Tensor]:
    """The output, outside the timed call."""
    return _prepare(CONFIG, q_nope, q_pe)


def cat(q_nope: torch.Tensor, q_pe: torch.Tensor) -> torch.Tensor:
    return prepare(q_nope, q_pe)()
