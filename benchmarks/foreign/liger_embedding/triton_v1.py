"""Liger-Kernel's experimental embedding forward with Liger's own launch: 128 tokens x 128
columns per program, Triton's default 4 warps."""

from __future__ import annotations

from collections.abc import Callable

import torch

from foreign.liger_embedding.launcher import LigerEmbeddingConfig
from foreign.liger_embedding.launcher import prepare as _prepare

CONFIG = LigerEmbeddingConfig(block_m=None, block_n=None, num_warps=None)


def prepare(table: torch.Tensor, ids: torch.Tensor) -> Callable[[], torch.Tensor]:
    """The output buffer and the grid, outside the timed call."""
    return _prepare(CONFIG, table, ids)


def embedding(table: torch.Tensor, ids: torch.Tensor) -> torch.Tensor:
    return prepare(table, ids)()
