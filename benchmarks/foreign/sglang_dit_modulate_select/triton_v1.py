"""SGLang's per-token select of two adaLN modulations with SGLang's own launch: 128 x 128
tiles (`fuse_scale_shift_gate_select01_kernel`'s defaults, kept by Qwen-Image's `_modulate`),
4 warps and 2 stages, fixed in the wrapper (no heuristic, autotuner or tuned table)."""

from __future__ import annotations

from collections.abc import Callable

import torch

from foreign.sglang_dit_modulate_select.launcher import ModulateSelectConfig
from foreign.sglang_dit_modulate_select.launcher import prepare as _prepare

CONFIG = ModulateSelectConfig(block_l=None, block_c=None, num_warps=None)


def prepare(
    x: torch.Tensor, scale0: torch.Tensor, shift0: torch.Tensor, gate0: torch.Tensor,
    scale1: torch.Tensor, shift1: torch.Tensor, gate1: torch.Tensor, index: torch.Tensor,
) -> Callable[[], tuple[torch.Tensor, torch.Tensor]]:  # fmt: skip
    """The two outputs, outside the timed call."""
    return _prepare(CONFIG, x, scale0, shift0, gate0, scale1, shift1, gate1, index)


def modulate_select(
    x: torch.Tensor, scale0: torch.Tensor, shift0: torch.Tensor, gate0: torch.Tensor,
    scale1: torch.Tensor, shift1: torch.Tensor, gate1: torch.Tensor, index: torch.Tensor,
) -> tuple[torch.Tensor, torch.Tensor]:  # fmt: skip
    return prepare(x, scale0, shift0, gate0, scale1, shift1, gate1, index)()
