"""FlagGems' mHC split + Sinkhorn for four streams with FlagGems' launch: BLOCK_N and warps
by token count (16/1 up to 256 tokens, 32/1 up to 2048, 128/4 up to 16384, 256/8 beyond),
1 stage, 20 iterations; the three fp32 outputs made in `prepare`."""

from __future__ import annotations

from collections.abc import Callable

import torch

from foreign.flaggems_mhc_sinkhorn.launcher import MhcSinkhornConfig
from foreign.flaggems_mhc_sinkhorn.launcher import prepare as _prepare

CONFIG = MhcSinkhornConfig(block_n=None, num_warps=None, num_stages=None)


def prepare(
    mixes: torch.Tensor, hc_scale: torch.Tensor, hc_base: torch.Tensor
) -> Callable[[], tuple[torch.Tensor, torch.Tensor, torch.Tensor]]:
    """The output buffers, outside the timed call."""
    return _prepare(CONFIG, mixes, hc_scale, hc_base)


def split_sinkhorn(
    mixes: torch.Tensor, hc_scale: torch.Tensor, hc_base: torch.Tensor
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    return prepare(mixes, hc_scale, hc_base)()
