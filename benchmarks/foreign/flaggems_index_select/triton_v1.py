"""FlagGems' index_select along the last dimension with FlagGems' own launch: its
`@triton.heuristics` tiles (1 row and 512 selected columns per program at these
vocabularies) and Triton's default 4 warps; the output made outside the timed call."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import torch

from foreign.flaggems_index_select.launcher import IndexSelectConfig
from foreign.flaggems_index_select.launcher import prepare as _prepare

# index_select's heuristic (runtime/backend/_nvidia/heuristics_config_utils.py; Hopper's
# file does not override it): BLOCK_M = min(4, next_pow2(cdiv(256, vocab))) = 1 and
# BLOCK_N = max(16, min(512, next_pow2(cdiv(vocab, 16)))) = 512 at 128,256 columns
CONFIG = IndexSelectConfig(block_m=None, block_n=None, num_warps=None)


def prepare(logits: torch.Tensor, draft_ids: torch.Tensor) -> Callable[[], Any]:
    """The output, outside the timed call."""
    return _prepare(CONFIG, logits, draft_ids)


def index_select(logits: torch.Tensor, draft_ids: torch.Tensor) -> Any:
    return prepare(logits, draft_ids)()
