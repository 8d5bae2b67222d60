"""vLLM's ViT 3-D rotary setup with vLLM's own choice: 32 patch tokens per program, the
rotary half-dimension in one power-of-two tile, 8 warps; cos and sin made outside the
timed call."""

from __future__ import annotations

from collections.abc import Callable

import torch

from foreign.vllm_vit_mrope_setup.launcher import VitMropeConfig
from foreign.vllm_vit_mrope_setup.launcher import prepare as _prepare

# VitMropeSetup.forward: _vit_mrope_setup_kernel[(cdiv(n, 32),)](..., BLOCK_N=32,
# BLOCK_D=next_pow2(half_rot), num_warps=8), no num_stages.
CONFIG = VitMropeConfig(block_n=None, num_warps=None)


def prepare(
    inv_freq_t: torch.Tensor, inv_freq_h: torch.Tensor, inv_freq_w: torch.Tensor,
    cu_seqlens: torch.Tensor, grids: torch.Tensor, spatial_merge: int,
) -> Callable[[], tuple[torch.Tensor, torch.Tensor]]:  # fmt: skip
    """cos and sin, outside the timed call."""
    return _prepare(CONFIG, inv_freq_t, inv_freq_h, inv_freq_w, cu_seqlens, grids, spatial_merge)


def vit_mrope_setup(
    inv_freq_t: torch.Tensor, inv_freq_h: torch.Tensor, inv_freq_w: torch.Tensor,
    cu_seqlens: torch.Tensor, grids: torch.Tensor, spatial_merge: int,
) -> tuple[torch.Tensor, torch.Tensor]:  # fmt: skip
    return prepare(inv_freq_t, inv_freq_h, inv_freq_w, cu_seqlens, grids, spatial_merge)()
