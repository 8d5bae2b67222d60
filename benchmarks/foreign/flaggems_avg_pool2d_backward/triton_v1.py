"""FlagGems' average pooling backward with FlagGems' own choice: the first of the six
configurations its @triton.autotune lists (16 x 16 input tiles, 4 warps, 4 stages); the
fp32 gradient allocated outside the timed call, zero-filled, computed and cast inside it."""

from __future__ import annotations

from collections.abc import Callable

import torch

from foreign.flaggems_avg_pool2d_backward.launcher import AvgPool2dBackwardConfig
from foreign.flaggems_avg_pool2d_backward.launcher import prepare as _prepare

# FlagGems autotunes over six configurations written in the kernel's file; the first
CONFIG = AvgPool2dBackwardConfig(block_h=None, block_w=None, num_warps=None)


def prepare(grad_output: torch.Tensor, pool: int) -> Callable[[], torch.Tensor]:
    """The fp32 gradient, outside the timed call."""
    return _prepare(CONFIG, grad_output, pool)


def avg_pool2d_backward(grad_output: torch.Tensor, pool: int) -> torch.Tensor:
    return prepare(grad_output, pool)()
