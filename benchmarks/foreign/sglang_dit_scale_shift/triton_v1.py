"""SGLang's adaLN modulation with SGLang's own launch: 128 x 128 tiles
(`fuse_scale_shift_kernel`'s defaults, kept by LayerNormScaleShift), 4 warps and 2 stages,
fixed in the wrapper (no heuristic, autotuner or tuned table)."""

from __future__ import annotations

from collections.abc import Callable

import torch

from foreign.sglang_dit_scale_shift.launcher import ScaleShiftConfig
from foreign.sglang_dit_scale_shift.launcher import prepare as _prepare

CONFIG = ScaleShiftConfig(block_l=None, block_c=None, num_warps=None)


def prepare(
    x: torch.Tensor, scale: torch.Tensor, shift: torch.Tensor
) -> Callable[[], torch.Tensor]:
    """The output, outside the timed call."""
    return _prepare(CONFIG, x, scale, shift)


def scale_shift(x: torch.Tensor, scale: torch.Tensor, shift: torch.Tensor) -> torch.Tensor:
    return prepare(x, scale, shift)()
