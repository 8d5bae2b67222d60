"""FlagGems' pixel_unshuffle with FlagGems' own launch (1024 output elements per program,
Triton's default 4 warps: fixed in its wrapper, no heuristic or tuning entry); the output
made outside the timed call."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import torch

from foreign.flaggems_pixel_unshuffle.launcher import PixelUnshuffleConfig
from foreign.flaggems_pixel_unshuffle.launcher import prepare as _prepare

# pixel_unshuffle's BLOCK_SIZE = 1024, set in its wrapper; no warps passed
CONFIG = PixelUnshuffleConfig(block_size=None, num_warps=None)


def prepare(x: torch.Tensor, factor: int) -> Callable[[], Any]:
    """The output, outside the timed call."""
    return _prepare(CONFIG, x, factor)


def pixel_unshuffle(x: torch.Tensor, factor: int) -> Any:
    return prepare(x, factor)()
