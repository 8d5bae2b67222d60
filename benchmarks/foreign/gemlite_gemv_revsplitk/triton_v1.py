"""GemLite's reverse split-K GEMV with GemLite's own H100 launch (`gemv_revsplitK_forward`):
its configs/h100.json entry for the shape (at both trials 256 columns and two 8-deep K slices
a program, 2 warps; activations loaded after the weights and 2 stages for the gate and up
projection, before and 1 stage for the down projection), its default config through its
pruner elsewhere; the fp16 output zero-filled before each launch, allocated outside the timed
call."""

from __future__ import annotations

from collections.abc import Callable

import torch

from foreign.gemlite_gemv_revsplitk.launcher import GemvRevSplitKConfig
from foreign.gemlite_gemv_revsplitk.launcher import prepare as _prepare

CONFIG = GemvRevSplitKConfig(block_n=None, block_k=None, num_warps=None, num_stages=None)


def prepare(
    x: torch.Tensor, w_q: torch.Tensor, scales: torch.Tensor, zeros: torch.Tensor, group: int
) -> Callable[[], torch.Tensor]:
    """The [tokens, n] output, outside the timed call (zeroed inside it)."""
    return _prepare(CONFIG, x, w_q, scales, zeros, group)


def gemv_revsplitk(
    x: torch.Tensor, w_q: torch.Tensor, scales: torch.Tensor, zeros: torch.Tensor, group: int
) -> torch.Tensor:
    return prepare(x, w_q, scales, zeros, group)()
