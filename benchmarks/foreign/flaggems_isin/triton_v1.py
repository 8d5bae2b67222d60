"""FlagGems' isin by binary search with FlagGems' own choice: its wrapper's table by the
number of ids (512-id tiles and 8 warps up to 2^20 ids, one program per tile; FlagGems does
not autotune it); the set sorted and the output made outside the timed call."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import torch

from foreign.flaggems_isin.launcher import IsinConfig
from foreign.flaggems_isin.launcher import prepare as _prepare

# the table of FlagGems' isin_by_search (no tuning YAML entry for it)
CONFIG = IsinConfig(block_m=None, num_warps=None, programs=None)


def prepare(ids: torch.Tensor, id_set: torch.Tensor) -> Callable[[], Any]:
    """The sorted set and the bool output, outside the timed call."""
    return _prepare(CONFIG, ids, id_set)


def isin(ids: torch.Tensor, id_set: torch.Tensor) -> Any:
    return prepare(ids, id_set)()
