"""The Triton tutorial fused softmax as the tutorial launches it on an H100/H200: 8 warps,
4 pipeline stages, a persistent grid sized from registers and shared memory."""

from __future__ import annotations

from collections.abc import Callable

import torch

from foreign.triton_softmax.launcher import SoftmaxConfig
from foreign.triton_softmax.launcher import prepare as _prepare

CONFIG = SoftmaxConfig(num_warps=8, num_stages=4)


def prepare(x: torch.Tensor) -> Callable[[], torch.Tensor]:
    """Compile, occupancy and grid (the tutorial's set-up), outside the timed call."""
    return _prepare(CONFIG, x)


def softmax(x: torch.Tensor) -> torch.Tensor:
    return prepare(x)()
