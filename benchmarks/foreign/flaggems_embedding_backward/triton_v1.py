"""FlagGems' embedding backward with FlagGems' own choice: the 128 hidden columns per
program fixed in its `embedding_dense_backward` and Triton's default 4 warps; the fp32
table allocated outside the timed call (its zeroing and the final cast inside)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import torch

from foreign.flaggems_embedding_backward.launcher import EmbeddingBackwardConfig
from foreign.flaggems_embedding_backward.launcher import prepare as _prepare

# FlagGems does not autotune this kernel: BLOCK_D = 128 is written in its wrapper
CONFIG = EmbeddingBackwardConfig(block_d=None, num_warps=None)


def prepare(grad_output: torch.Tensor, indices: torch.Tensor, vocab: int) -> Callable[[], Any]:
    """The fp32 gradient table, outside the timed call."""
    return _prepare(CONFIG, grad_output, indices, vocab)


def embedding_backward(grad_output: torch.Tensor, indices: torch.Tensor, vocab: int) -> Any:
    return prepare(grad_output, indices, vocab)()
