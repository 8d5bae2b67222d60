"""Liger-Kernel's mHC coefficients (fused projection + RMS, then split and Sinkhorn) with
Liger's own launch: 32-token x 256-deep x 32-coefficient tl.dot tiles on 4 warps, one
1-warp Sinkhorn program per token."""

from __future__ import annotations

from collections.abc import Callable

import torch

from foreign.liger_mhc_coeffs.launcher import LigerMhcCoeffsConfig
from foreign.liger_mhc_coeffs.launcher import prepare as _prepare

CONFIG = LigerMhcCoeffsConfig(
    block_n=None, block_k=None, block_m=None, num_warps=None, sinkhorn_warps=None
)


def prepare(
    x: torch.Tensor, phi: torch.Tensor, b: torch.Tensor, alphas: torch.Tensor
) -> Callable[[], tuple[torch.Tensor, torch.Tensor, torch.Tensor]]:
    """The coefficient buffers, outside the timed call."""
    return _prepare(CONFIG, x, phi, b, alphas)


def mhc_coeffs(
    x: torch.Tensor, phi: torch.Tensor, b: torch.Tensor, alphas: torch.Tensor
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    return prepare(x, phi, b, alphas)()
