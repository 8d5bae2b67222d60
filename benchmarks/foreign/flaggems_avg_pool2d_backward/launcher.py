"""FlagGems' 2-D average pooling backward (src/flag_gems/ops/avg_pool2d.py, v5.0.2:
`avg_pool2d_backward_kernel`), launched as FlagGems' `avg_pool2d_backward` (its override
of aten::avg_pool2d_backward) launches it, so that its launch choices are knobs.

The gradient of a window mean, in gather form (no atomics): one program per (image,
channel) plane and per BLOCK_H x BLOCK_W tile of input pixels loops over the kernel_h x
kernel_w window taps; at each tap it finds, for every pixel of its tile, the output pixel
whose window puts this input pixel at that tap (valid where the offset divides by the
stride and lands inside the output map), loads that output pixel's gradient and divides it
by the output window's divisor, and adds it into an fp32 accumulator; it stores the tile
once, in fp32.  Without count_include_pad (PoolFormer's pooling), the divisor is the number
of the output window's pixels inside the input map, and the kernel counts it again at every
tap: a second kernel_h x kernel_w loop of bounds compares over the whole tile, so a 3 x 3
window runs 81 compare-and-count steps per input pixel next to its 9 loads.  Compiled for
sm_90 at FlagGems' 16 x 16 tile and 4 warps (two pixels a thread), ptxas unrolls the
column-tap and count loops (the counts become POPC of compare predicates) and each of the
three row taps issues 424 instructions, mostly integer compares, selects and logic: about
640 a pixel, against 9 gradient loads and one fp32 store.

FlagGems' call: it makes the gradient contiguous, zero-fills an fp32 gradient of the
input's shape (`torch.zeros_like(input, dtype=torch.float32)`), launches the kernel and
casts the result to the gradient's dtype (`.to`, no copy in fp32).  Its `@triton.autotune`
over six configurations written in the file (keyed by the map, the window and the stride)
lists first a 16 x 16 tile, 4 warps, 4 stages.  Knobs: the two tile sides and the warps,
None keeping that first configuration.  The stages are passed as FlagGems' 4 and are no
knob: the gathered loads are not pipelined (no shared memory), and the sm_90 SASS is the
same instruction for instruction at 1, 2, 4 and 5 stages (compared at 16 x 16 and 32 x 32
tiles, and at two stage counts each at 64 x 16, 16 x 64 and 8 x 8).  The fp32 gradient is
allocated in `prepare`; its zero fill, the kernel and the cast are the timed call (three
launches; two in fp32).  The pooling is PoolFormer's token mixer: a square odd window,
stride 1, padding window // 2 (the output map is the input's size), count_include_pad
False, no divisor override, which FlagGems passes as 0.0.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import torch
import triton

from foreign import _common

LAST_INFO: dict[str, Any] = {}
# the first of the six configurations in avg_pool2d_backward_kernel's @triton.autotune
FLAGGEMS_BLOCK_H = 16
FLAGGEMS_BLOCK_W = 16
FLAGGEMS_WARPS = 4
FLAGGEMS_STAGES = 4  # passed as is: the compiled kernel is the same at any stage count
NO_DIVISOR_OVERRIDE = 0.0  # what FlagGems passes for divisor_override=None


@dataclass(frozen=True)
class AvgPool2dBackwardConfig:
    block_h: int | None = None  # None: FlagGems' 16 input rows per program
    block_w: int | None = None  # None: FlagGems' 16 input columns per program
    num_warps: int | None = None  # None: FlagGems' 4


def prepare(
    cfg: AvgPool2dBackwardConfig, grad_output: torch.Tensor, pool: int
) -> Callable[[], torch.Tensor]:
    mod = _common.load_source("flaggems_avg_pool2d_backward")
    if grad_output.dim() != 4 or not grad_output.is_contiguous():
        raise ValueError("grad_output must be a contiguous [n, c, h, w] tensor")
    if pool < 1 or pool % 2 == 0:
        raise ValueError("pool must be odd (stride 1 and padding pool // 2 keep the map size)")
    n, c, h, w = grad_output.shape
    pad = pool // 2
    bh = cfg.block_h or FLAGGEMS_BLOCK_H
    bw = cfg.block_w or FLAGGEMS_BLOCK_W
    warps = cfg.num_warps or FLAGGEMS_WARPS
    grad_input = torch.empty(n, c, h, w, device=grad_output.device, dtype=torch.float32)
    grid = (n * c, triton.cdiv(h, bh) * triton.cdiv(w, bw))
    cast = grad_output.dtype != torch.float32

    def launch() -> torch.Tensor:
        grad_input.zero_()
        handle = mod.avg_pool2d_backward_kernel[grid](
            grad_output, grad_input, c, h, w, h, w, *grad_input.stride(), *grad_output.stride(),
            pool, pool, 1, 1, pad, pad, 1, 1, COUNT_INCLUDE_PAD=False,
            divisor_override=NO_DIVISOR_OVERRIDE, BLOCK_H=bh, BLOCK_W=bw, num_warps=warps,
            num_stages=FLAGGEMS_STAGES,
        )  # fmt: skip
        out = grad_input.to(grad_output.dtype) if cast else grad_input
        _common.record(
            LAST_INFO, handle, kernels=3 if cast else 2,
            kernel_names=["zero_", "avg_pool2d_backward_kernel"] + (["to"] if cast else []),
            block_h=bh, block_w=bw, num_warps=warps, num_stages=FLAGGEMS_STAGES,
            programs=grid[0] * grid[1],
        )  # fmt: skip
        return out

    return launch
