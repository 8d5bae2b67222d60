"""vLLM's ViT 3-D rotary setup (vllm/model_executor/layers/rotary_embedding/
mrope_vit_setup.py, v0.34.0: `_vit_mrope_setup_kernel`), launched as vLLM's
`VitMropeSetup.forward` launches it, so that its launch choices are knobs.

One program per BLOCK_N patch tokens of the flattened batch of grids.  Each program finds
its tokens' grid by walking every grid's end in `cu_seqlens` (a scalar loop over the
grids), loads the grid's h and w, and decodes each token's temporal, row and column
position arithmetically in the spatial-merge order of the ViT (merge x merge blocks of
patches, row-major inside).  Then, for each of the three axes, it multiplies the axis
position by that axis's inverse frequencies over a [BLOCK_N, BLOCK_D] tile of the rotary
half-dimension and stores fp32 cos and sin of it into that axis's plane, masked to the
axis's section of columns (triton_mrope reads only those).

vLLM's launch: BLOCK_N = 32 tokens, BLOCK_D = next_pow2(half_t + half_h + half_w),
num_warps = 8, Triton's default stages (the kernel has no loop to pipeline).  Knobs: the
tokens per program and the warps, None keeping vLLM's.  vLLM builds cu_seqlens and the
grids on the host and copies them in one async host-to-device copy per call; here they are
made with the inputs.  vLLM allocates cos and sin with torch.empty per call and leaves the
other axes' columns of each plane unwritten; here they are allocated once in `prepare` with
zeros, so that the unwritten columns compare equal to the reference's zeros.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import torch
import triton

from foreign import _common

LAST_INFO: dict[str, Any] = {}
BLOCK_N = 32  # vLLM's tokens per program
WARPS = 8  # vLLM's num_warps


@dataclass(frozen=True)
class VitMropeConfig:
    block_n: int | None = None  # None: 32 patch tokens per program
    num_warps: int | None = None  # None: 8


def prepare(
    cfg: VitMropeConfig, inv_freq_t: torch.Tensor, inv_freq_h: torch.Tensor,
    inv_freq_w: torch.Tensor, cu_seqlens: torch.Tensor, grids: torch.Tensor,
    spatial_merge: int,
) -> Callable[[], tuple[torch.Tensor, torch.Tensor]]:  # fmt: skip
    mod = _common.load_source("vllm_vit_mrope_setup")
    g = grids.shape[0]
    if cu_seqlens.shape[0] != g + 1 or grids.shape[1] != 3:
        raise ValueError("cu_seqlens [grids + 1] and grids [grids, 3], int32")
    n = int(cu_seqlens[-1])
    half_t, half_h, half_w = inv_freq_t.numel(), inv_freq_h.numel(), inv_freq_w.numel()
    half_rot = half_t + half_h + half_w
    block_n = cfg.block_n or BLOCK_N
    warps = cfg.num_warps or WARPS
    block_d = triton.next_power_of_2(half_rot)
    dev = inv_freq_t.device
    cos = torch.zeros(3, n, half_rot, device=dev, dtype=torch.float32)
    sin = torch.zeros(3, n, half_rot, device=dev, dtype=torch.float32)
    grid = (triton.cdiv(n, block_n),)

    def launch() -> tuple[torch.Tensor, torch.Tensor]:
        handle = mod._vit_mrope_setup_kernel[grid](
            inv_freq_t, inv_freq_h, inv_freq_w, cos, sin, cu_seqlens, grids, n, g,
            half_t=half_t, half_h=half_h, half_w=half_w, spatial_merge=spatial_merge,
            BLOCK_N=block_n, BLOCK_D=block_d, num_warps=warps,
        )  # fmt: skip
        _common.record(
            LAST_INFO, handle, kernels=1, kernel_names=["_vit_mrope_setup_kernel"],
            block_n=block_n, block_d=block_d, num_warps=warps, programs=grid[0], grids=g,
        )  # fmt: skip
        return cos, sin

    return launch
