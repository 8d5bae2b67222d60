"""FlagGems' anti-aliased bicubic resize (src/flag_gems/ops/upsample_bicubic2d_aa.py, v5.0.2:
`general_interpolate_bicubic2d_aa_kernel`, its kernel whenever a side shrinks), launched as
FlagGems' `_upsample_bicubic2d_aa` launches it so that its launch choices are knobs.

One program per BLOCK_Y x BLOCK_X tile of output pixels (the grid covers one plane; the
tile's rows and columns wrap modulo the output size, so an edge tile recomputes and
rewrites pixels of the plane's start instead of masking).  It computes each output row's
and column's source window (the bicubic support widened by the scale, 2 x scale + 1
taps: 13 at a 3.2x downscale), then loops over every image and channel: for each window
row, each window column's strided load of the [BLOCK_Y, BLOCK_X] source pixels is
weighted and summed in fp32, normalised by the column weights' total, weighted by the row
weight; the result normalised by the row weights' total and stored.  The weights are
recomputed for every plane.

FlagGems' launch: `@triton.autotune` over the configurations its nvidia tuning YAML
generates for `upsample_bicubic2d_aa` (BLOCK_X 512, 256, 128, 64 by BLOCK_Y 2, 1 by 4 or 8
warps, the loader's 2 stages; the Hopper YAML has no entry), keyed on the batch, channels
and output size.  `triton_v1` takes each list's first value (512 x 2, 4 warps, 2 stages);
the loader's generator emits the combinations last value first, so the autotuner's own list
starts at 64 x 1 with 8 warps.  Knobs: the tile's sides, warps and stages.  FlagGems
allocates the output per call; here it is made in `prepare`.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import torch
import triton

from foreign import _common

LAST_INFO: dict[str, Any] = {}
# the first value of each list in the nvidia tuning YAML's upsample_bicubic2d_aa entry
FLAGGEMS_BLOCK_X = 512
FLAGGEMS_BLOCK_Y = 2
FLAGGEMS_WARPS = 4
FLAGGEMS_STAGES = 2  # FlagGems' config loader's default


@dataclass(frozen=True)
class BicubicAAConfig:
    block_x: int | None = None  # None: FlagGems' YAML's first, 512 output columns per tile
    block_y: int | None = None  # None: 2 output rows per tile
    num_warps: int | None = None  # None: 4
    num_stages: int | None = None  # None: the loader's 2


def prepare(
    cfg: BicubicAAConfig, images: torch.Tensor, out_h: int, out_w: int
) -> Callable[[], Any]:
    mod = _common.load_source("flaggems_upsample_bicubic2d_aa")
    if images.dim() != 4 or not images.is_contiguous():
        raise ValueError("images must be a contiguous [n, c, h, w] tensor")
    n, c, ih, iw = images.shape
    out = torch.empty(n, c, out_h, out_w, device=images.device, dtype=images.dtype)
    scale_h, scale_w = ih / out_h, iw / out_w  # align_corners=False, no explicit scale
    bx = cfg.block_x or FLAGGEMS_BLOCK_X
    by = cfg.block_y or FLAGGEMS_BLOCK_Y
    warps = cfg.num_warps or FLAGGEMS_WARPS
    stages = cfg.num_stages or FLAGGEMS_STAGES
    grid = (triton.cdiv(out_w, bx), triton.cdiv(out_h, by))

    def launch() -> torch.Tensor:
        with _common.interpreter_float_scalars():
            handle = mod.general_interpolate_bicubic2d_aa_kernel[grid](
                out, images, n, c, out_h, out_w, ih, iw, scale_h, scale_w, BLOCK_X=bx,
                BLOCK_Y=by, num_warps=warps, num_stages=stages,
            )  # fmt: skip
        _common.record(
            LAST_INFO, handle, kernels=1,
            kernel_names=["general_interpolate_bicubic2d_aa_kernel"],
            block_x=bx, block_y=by, num_warps=warps, num_stages=stages,
            programs=grid[0] * grid[1],
        )  # fmt: skip
        return out

    return launch
