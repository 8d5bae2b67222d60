"""SGLang's causal conv1d decode update with SGLang's own launch: 256 channels per program,
Triton's default 4 warps; the pool's slots shifted in place."""

from __future__ import annotations

from collections.abc import Callable

import torch

from foreign.sglang_conv1d_update.launcher import Conv1dUpdateConfig
from foreign.sglang_conv1d_update.launcher import prepare as _prepare

CONFIG = Conv1dUpdateConfig(block_n=None, num_warps=None)


def prepare(*inputs: torch.Tensor) -> Callable[[], tuple[torch.Tensor, torch.Tensor]]:
    """The output buffer, the transposed pool view and the grid, outside the timed call."""
    return _prepare(CONFIG, *inputs)


def conv1d_update(*inputs: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    return prepare(*inputs)()
