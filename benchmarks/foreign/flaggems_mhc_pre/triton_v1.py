"""FlagGems' fused mHC pre step with FlagGems' own choice: the first of the ten
configurations its @triton.autotune lists (BLOCK_H 256, 4 warps, 1 stage), one program per
token; the three outputs made outside the timed call."""

from __future__ import annotations

from collections.abc import Callable

import torch

from foreign.flaggems_mhc_pre.launcher import MhcPreConfig
from foreign.flaggems_mhc_pre.launcher import prepare as _prepare

# FlagGems autotunes over ten configurations written in the kernel's file; the first
CONFIG = MhcPreConfig(block_h=None, num_warps=None, num_stages=None)


def prepare(
    gemm_out: torch.Tensor, hc_scale: torch.Tensor, hc_base: torch.Tensor, residual: torch.Tensor
) -> Callable[[], tuple[torch.Tensor, torch.Tensor, torch.Tensor]]:
    """The output buffers, outside the timed call."""
    return _prepare(CONFIG, gemm_out, hc_scale, hc_base, residual)


def mhc_pre(
    gemm_out: torch.Tensor, hc_scale: torch.Tensor, hc_base: torch.Tensor, residual: torch.Tensor
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    return prepare(gemm_out, hc_scale, hc_base, residual)()
