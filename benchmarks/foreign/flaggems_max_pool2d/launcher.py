"""FlagGems' 2-D max pooling forward (src/flag_gems/ops/max_pool2d_with_indices.py, v5.0.2:
`max_pool2d_forward_kernel`), launched as FlagGems' `max_pool2d_with_indices` launches it
so that its launch choices are knobs.

One program per (image, channel) plane and BLOCK_H x BLOCK_W tile of output pixels: for
each of the kernel_h x kernel_w window taps (unrolled: the pooling geometry is constexpr)
it loads the strided input pixels under the tile (masked outside the image, reading the
dtype's minimum there) and keeps a running maximum and, where a tap is strictly greater,
its int64 index in the input plane; then it stores both tiles, masked at the plane's edge.

FlagGems' launch: `@triton.autotune` over twelve tiles written in the file (8 x 8 to 64 x
64, 2 to 8 warps, 2 to 5 stages), keyed on the output size and the pooling geometry; the
first is 16 x 16 with 4 warps and 4 stages.  Knobs: the tile's two sides, warps and stages,
None keeping that first configuration.  FlagGems makes its input contiguous and allocates
the two outputs per call; here they are made in `prepare`.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import torch
import triton

from foreign import _common
from foreign.flaggems_max_pool2d import reference

LAST_INFO: dict[str, Any] = {}
# the first of the twelve configurations FlagGems' @triton.autotune lists for this kernel
FLAGGEMS_BLOCK_H = 16
FLAGGEMS_BLOCK_W = 16
FLAGGEMS_WARPS = 4
FLAGGEMS_STAGES = 4


@dataclass(frozen=True)
class MaxPool2dConfig:
    block_h: int | None = None  # None: FlagGems' first autotune entry, 16 output rows
    block_w: int | None = None  # None: 16 output columns
    num_warps: int | None = None  # None: 4
    num_stages: int | None = None  # None: 4


def prepare(cfg: MaxPool2dConfig, x: torch.Tensor) -> Callable[[], Any]:
    mod = _common.load_source("flaggems_max_pool2d")
    if x.dim() != 4 or not x.is_contiguous():
        raise ValueError("x must be a contiguous [n, c, h, w] tensor")
    n, c, h, w = x.shape
    oh, ow = reference.out_size(h), reference.out_size(w)
    out = torch.empty(n, c, oh, ow, device=x.device, dtype=x.dtype)
    idx = torch.empty(n, c, oh, ow, device=x.device, dtype=torch.int64)
    bh = cfg.block_h or FLAGGEMS_BLOCK_H
    bw = cfg.block_w or FLAGGEMS_BLOCK_W
    warps = cfg.num_warps or FLAGGEMS_WARPS
    stages = cfg.num_stages or FLAGGEMS_STAGES
    grid = (n * c, triton.cdiv(oh, bh) * triton.cdiv(ow, bw))
    k, s, p = reference.KERNEL, reference.STRIDE, reference.PADDING

    def launch() -> tuple[torch.Tensor, torch.Tensor]:
        handle = mod.max_pool2d_forward_kernel[grid](
            x, out, idx, *x.stride(), c, h, w, oh, ow, k, k, s, s, p, p, 1, 1,
            BLOCK_H=bh, BLOCK_W=bw, num_warps=warps, num_stages=stages,
        )  # fmt: skip
        _common.record(
            LAST_INFO, handle, kernels=1, kernel_names=["max_pool2d_forward_kernel"],
            block_h=bh, block_w=bw, num_warps=warps, num_stages=stages,
            programs=grid[0] * grid[1],
        )  # fmt: skip
        return out, idx

    return launch
