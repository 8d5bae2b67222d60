"""FlagGems' 2-D average pooling forward (src/flag_gems/ops/avg_pool2d.py, v5.0.2:
`avg_pool2d_forward_kernel`), launched as FlagGems' `avg_pool2d` launches it so that its
launch choices are knobs.

One program per (image, channel) plane and per BLOCK_H x BLOCK_W tile of output pixels
loops over the kernel_h x kernel_w window taps; at each tap it gathers the tile's input
pixels (columns stride_w apart, masked at the padded border), adds them into an fp32 sum
and counts the taps inside the map, then divides (by the window's size with
count_include_pad, FlagGems' default as torch's) and stores in the input dtype.

FlagGems' launch: `@triton.autotune` over nine configurations written in the file (keyed
by the output size, the window and the stride), the first of which is a 16 x 16 tile, 4
warps, 4 stages.  Knobs: the two tile sides, warps and stages, None keeping that first
configuration.  FlagGems makes the input contiguous and allocates the output per call;
the inputs here are contiguous NCHW and the output is made in `prepare`, outside the timed
call.  The window is square with the stride equal to it and no padding (non-overlapping
pooling).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import torch
import triton

from foreign import _common

LAST_INFO: dict[str, Any] = {}
# the first of the nine configurations in avg_pool2d_forward_kernel's @triton.autotune
FLAGGEMS_BLOCK_H = 16
FLAGGEMS_BLOCK_W = 16
FLAGGEMS_WARPS = 4
FLAGGEMS_STAGES = 4


@dataclass(frozen=True)
class AvgPool2dConfig:
    block_h: int | None = None  # None: FlagGems' 16 output rows per program
    block_w: int | None = None  # None: FlagGems' 16 output columns per program
    num_warps: int | None = None  # None: FlagGems' 4
    num_stages: int | None = None  # None: FlagGems' 4


def prepare(cfg: AvgPool2dConfig, x: torch.Tensor, pool: int) -> Callable[[], Any]:
    mod = _common.load_source("flaggems_avg_pool2d")
    if x.dim() != 4 or not x.is_contiguous():
        raise ValueError("x must be a contiguous [n, c, h, w] tensor")
    n, c, h, w = x.shape
    out_h, out_w = (h - pool) // pool + 1, (w - pool) // pool + 1
    out = torch.empty(n, c, out_h, out_w, device=x.device, dtype=x.dtype)
    bh = cfg.block_h or FLAGGEMS_BLOCK_H
    bw = cfg.block_w or FLAGGEMS_BLOCK_W
    warps = cfg.num_warps or FLAGGEMS_WARPS
    stages = cfg.num_stages or FLAGGEMS_STAGES
    grid = (n * c, triton.cdiv(out_h, bh) * triton.cdiv(out_w, bw))

    def launch() -> torch.Tensor:
        handle = mod.avg_pool2d_forward_kernel[grid](
            x, out, *x.stride(), c, h, w, out_h, out_w, pool, pool, pool, pool, 0, 0, 1, 1,
            COUNT_INCLUDE_PAD=True, divisor_override=0.0, BLOCK_H=bh, BLOCK_W=bw,
            num_warps=warps, num_stages=stages,
        )  # fmt: skip
        _common.record(
            LAST_INFO, handle, kernels=1, kernel_names=["avg_pool2d_forward_kernel"],
            block_h=bh, block_w=bw, num_warps=warps, num_stages=stages,
            programs=grid[0] * grid[1],
        )  # fmt: skip
        return out

    return launch
