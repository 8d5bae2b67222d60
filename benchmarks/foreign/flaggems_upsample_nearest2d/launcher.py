"""FlagGems' nearest-neighbour 2-D upsampling (src/flag_gems/ops/upsample_nearest2d.py,
v5.0.2: `upsample_nearest2d_kernel`), launched as FlagGems' `upsample_nearest2d` launches
it so that its launch choices are knobs.

Each output pixel copies the input pixel at (floor(oh * IH / OH), floor(ow * IW / OW)) of
its (image, channel) plane.  The grid is (cdiv(OH * OW, BLOCK_SIZE), cdiv(N * C, 4)): a
program takes BLOCK_SIZE consecutive output pixels of a plane, computes their source
pixels once, then walks the planes nc, nc + P, nc + 2P... (P the grid's second size) in a
while loop, one gathered load and one contiguous store per plane, so about four planes per
program.  SAME_H, SAME_W (no resampling along an axis) and USE_INT32_IDX are FlagGems'
heuristics of the shape, computed the same way here.

FlagGems' launch: `@triton.autotune` over its tuning YAML's `upsample_nearest2d` entry
(the nvidia backend's; the Hopper file has none), generated from BLOCK_SIZE in (1024, 2048)
and num_warps in (4, 8) with the loader's default 2 stages; its first values are 1024 and 4
warps.  Knobs: `block_size`, `planes_per_program` (the 4 in the grid's second size),
warps and stages, None keeping FlagGems'.  The output is allocated per call by FlagGems;
here it is made in `prepare`, outside the timed call.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import torch
import triton

from foreign import _common

LAST_INFO: dict[str, Any] = {}
# the first values of the `upsample_nearest2d` entry of FlagGems' nvidia tune_configs.yaml
FLAGGEMS_BLOCK_SIZE = 1024
FLAGGEMS_WARPS = 4
FLAGGEMS_STAGES = 2  # FlagGems' config loader's default for generated entries
FLAGGEMS_PLANES = 4  # the grid's second size is cdiv(N * C, 4)


@dataclass(frozen=True)
class UpsampleNearest2dConfig:
    block_size: int | None = None  # None: FlagGems' 1024 output pixels per program
    planes_per_program: int | None = None  # None: FlagGems' 4 (image, channel) planes
    num_warps: int | None = None  # None: FlagGems' 4
    num_stages: int | None = None  # None: FlagGems' 2


def prepare(cfg: UpsampleNearest2dConfig, x: torch.Tensor, scale: int) -> Callable[[], Any]:
    mod = _common.load_source("flaggems_upsample_nearest2d")
    if x.dim() != 4 or not x.is_contiguous():
        raise ValueError("x must be a contiguous [n, c, h, w] tensor")
    n, c, ih, iw = x.shape
    oh, ow = ih * scale, iw * scale
    out = torch.empty(n, c, oh, ow, device=x.device, dtype=x.dtype)
    block = cfg.block_size or FLAGGEMS_BLOCK_SIZE
    planes = cfg.planes_per_program or FLAGGEMS_PLANES
    warps = cfg.num_warps or FLAGGEMS_WARPS
    stages = cfg.num_stages or FLAGGEMS_STAGES
    grid = (triton.cdiv(oh * ow, block), triton.cdiv(n * c, planes))
    # FlagGems' heuristics of the shape, and its reciprocal scales (output size given)
    same_h, same_w = oh == ih, ow == iw
    int32_idx = n * c * oh * ow <= 2**31 - 1

    def launch() -> torch.Tensor:
        handle = mod.upsample_nearest2d_kernel[grid](
            out, x, n, c, oh, ow, ih, iw, ih / oh, iw / ow, BLOCK_SIZE=block,
            SAME_H=same_h, SAME_W=same_w, USE_INT32_IDX=int32_idx, num_warps=warps,
            num_stages=stages,
        )  # fmt: skip
        _common.record(
            LAST_INFO, handle, kernels=1, kernel_names=["upsample_nearest2d_kernel"],
            block_size=block, planes_per_program=planes, num_warps=warps, num_stages=stages,
            programs=grid[0] * grid[1],
        )  # fmt: skip
        return out

    return launch
