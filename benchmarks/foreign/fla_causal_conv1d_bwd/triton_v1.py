"""FLA's short-convolution backward with FLA's own launch (`causal_conv1d_bwd`'s, for
`ShortConvolution` with SiLU and no bias): 64-step time chunks (chunk_size), the first of its
autotune configurations, 16 channels and 4 warps, BW = next_pow2(W); the pre-activation an
input, the fp32 filter-gradient partials allocated outside the timed call and summed inside
it."""

from __future__ import annotations

from collections.abc import Callable

import torch

from foreign.fla_causal_conv1d_bwd.launcher import ConvBwdConfig
from foreign.fla_causal_conv1d_bwd.launcher import prepare as _prepare

CONFIG = ConvBwdConfig(block_t=None, block_d=None, num_warps=None)


def prepare(
    x: torch.Tensor, weight: torch.Tensor, y: torch.Tensor, dy: torch.Tensor
) -> Callable[[], tuple[torch.Tensor, torch.Tensor]]:
    """dx and the filter-gradient partials, outside the timed call."""
    return _prepare(CONFIG, x, weight, y, dy)


def causal_conv1d_bwd(
    x: torch.Tensor, weight: torch.Tensor, y: torch.Tensor, dy: torch.Tensor
) -> tuple[torch.Tensor, torch.Tensor]:
    return prepare(x, weight, y, dy)()
