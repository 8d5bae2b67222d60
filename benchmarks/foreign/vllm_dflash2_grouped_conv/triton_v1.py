"""vLLM's DFlash2 grouped convolution with vLLM's own launch: `dflash2_grouped_conv_impl`'s
channel tile for the shape (1024 at 128 rows or more with a hidden size that is a multiple
of 1024, else 512) and its 4 warps (no autotune, no loop over memory); the output made
outside the timed call."""

from __future__ import annotations

from collections.abc import Callable

import torch

from foreign.vllm_dflash2_grouped_conv.launcher import GroupedConvConfig
from foreign.vllm_dflash2_grouped_conv.launcher import prepare as _prepare

CONFIG = GroupedConvConfig(element_block=None, num_warps=None)


def prepare(
    x: torch.Tensor, delta: torch.Tensor, base: torch.Tensor, block: int, group: int
) -> Callable[[], torch.Tensor]:
    """The output, outside the timed call."""
    return _prepare(CONFIG, x, delta, base, block, group)


def grouped_conv(
    x: torch.Tensor, delta: torch.Tensor, base: torch.Tensor, block: int, group: int
) -> torch.Tensor:
    return prepare(x, delta, base, block, group)()
