"""FlagGems' top-k with FlagGems' own launch on stock Triton: 1024-column chunks (its
heuristic from 1024 columns on), k rounds of max and argmax per chunk, then one bitonic
argsort of every chunk's candidates per row; Triton's default 4 warps for both launches;
the candidate buffers and outputs made outside the timed call."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import torch

from foreign.flaggems_topk.launcher import TopkConfig
from foreign.flaggems_topk.launcher import prepare as _prepare

# chunk_size None: FlagGems' heuristic (256 below 1024 columns, else 1024, at least k)
CONFIG = TopkConfig(chunk_size=None, num_warps=None, merge_warps=None)


def prepare(x: torch.Tensor, k: int) -> Callable[[], Any]:
    """The candidate buffers and the outputs, outside the timed call."""
    return _prepare(CONFIG, x, k)


def topk(x: torch.Tensor, k: int) -> Any:
    return prepare(x, k)()
