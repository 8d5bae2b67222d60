"""FlagGems' 2-D convolution weight gradient (src/flag_gems/ops/conv2d.py, v5.0.2:
`conv2d_backward_kernel_weight`), launched as FlagGems' `Conv2d.backward` launches it for
the weight, so that its launch choices are knobs.

The weight gradient of a convolution is a GEMM whose rows are the filter's (input channel,
tap row, tap column) triples, whose columns are the output channels and whose depth is
every (image, output row, output column) position: dW[co, ci, kh, kw] = sum over n, ho, wo
of x[n, ci, ho * stride + kh - pad, wo * stride + kw - pad] * dy[n, co, ho, wo].  One
program per (BLOCK_CI_HK_WK filter rows, group, BLOCK_CO output channels) tile of the
gradient walks that depth in three nested loops: every output row, every output column, and
inside them the batch BLOCK_NO images at a time.  Each step gathers a [BLOCK_CI_HK_WK,
BLOCK_NO] tile of the input (each filter row's pixel at the step's position, in each image:
a row's pixels contiguous only along kw, the images a whole image apart; masked at the
padded border) and a [BLOCK_NO, BLOCK_CO] tile of the output gradient at that one position
(the channels a plane apart, the images a whole gradient image apart), and adds their
tl.dot into an fp32 accumulator (allow_tf32 off, so fp32 inputs take the exact path); the
tile is stored once, cast to the weight's dtype.  The grid is the weight's size over the
tile: no program splits the depth, so each walks all out_h x out_w x cdiv(batch, BLOCK_NO)
steps in sequence.

FlagGems' call: `Conv2d.backward` allocates the weight gradient with torch.zeros (a zero
fill, though the kernel writes every element) and launches the kernel over the grid
(cdiv(ci x kh x kw, BLOCK_CI_HK_WK), groups, cdiv(co, BLOCK_CO)), passing the forward
weight's strides for the gradient's (the same contiguous shape).  Its `@triton.autotune`
(keyed by the batch, the maps, the filter, the channels, the stride and the padding) runs
over the `conv2d_backward_weight` entries of its nvidia tuning YAML (the Hopper file has
none), whose first is 32 filter rows x 32 output channels x 32 images, 4 warps, 3 stages.
Knobs: the three tiles and the warps, None keeping that entry.  The stages are passed as
FlagGems' 3 and are no knob: the sm_90 cubin is the same byte for byte at 1 to 5 stages
(compared at FlagGems' tile, at 64 x 64 x 32 and 64 x 64 x 64 with 4 warps, and at
128 x 128 x 32 with 8): the gathered loads are not pipelined (no cp.async), only the two
tl.dot operand tiles pass through shared memory (4,096 bytes at FlagGems' tile, whose
32-row tile takes mma.sync; at 64 rows and 4 warps the dot is a wgmma).  The gradient is allocated in
`prepare`; its zero fill and the kernel are the timed call (two launches).
The same backward also computes the input's gradient (the forward kernel over the flipped,
transposed weight) and, with a bias, torch's sum for it: neither is wrapped here (a
ResNet convolution has no bias).  Padding filter // 2, no dilation, one group.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import torch
import triton

from foreign import _common

LAST_INFO: dict[str, Any] = {}
# the first `conv2d_backward_weight` entry of FlagGems' nvidia tune_configs.yaml
FLAGGEMS_BLOCK_CI_HK_WK = 32
FLAGGEMS_BLOCK_CO = 32
FLAGGEMS_BLOCK_NO = 32
FLAGGEMS_WARPS = 4
FLAGGEMS_STAGES = 3  # passed as is: the compiled kernel is the same at any stage count


@dataclass(frozen=True)
class Conv2dWgradConfig:
    block_ci_hk_wk: int | None = None  # None: FlagGems' 32 filter rows (ci, kh, kw)
    block_co: int | None = None  # None: FlagGems' 32 output channels
    block_no: int | None = None  # None: FlagGems' 32 images per step
    num_warps: int | None = None  # None: FlagGems' 4


def prepare(
    cfg: Conv2dWgradConfig, x: torch.Tensor, grad_output: torch.Tensor, filter_size: int,
    stride: int,
) -> Callable[[], torch.Tensor]:  # fmt: skip
    mod = _common.load_source("flaggems_conv2d_wgrad")
    if x.dim() != 4 or grad_output.dim() != 4 or x.shape[0] != grad_output.shape[0]:
        raise ValueError("x [n, c_in, h, w] and grad_output [n, c_out, oh, ow] must agree")
    x = x.contiguous()
    grad_output = grad_output.contiguous()
    n, c_in, h, w = x.shape
    _, c_out, out_h, out_w = grad_output.shape
    pad = filter_size // 2
    if (out_h, out_w) != (
        (h + 2 * pad - filter_size) // stride + 1,
        (w + 2 * pad - filter_size) // stride + 1,
    ):
        raise ValueError("grad_output's map does not match the filter, stride and padding")
    grad_weight = torch.empty(c_out, c_in, filter_size, filter_size, device=x.device, dtype=x.dtype)
    bm = cfg.block_ci_hk_wk or FLAGGEMS_BLOCK_CI_HK_WK
    bn = cfg.block_co or FLAGGEMS_BLOCK_CO
    bk = cfg.block_no or FLAGGEMS_BLOCK_NO
    warps = cfg.num_warps or FLAGGEMS_WARPS
    grid = (triton.cdiv(c_in * filter_size * filter_size, bm), 1, triton.cdiv(c_out, bn))

    def launch() -> torch.Tensor:
        grad_weight.zero_()
        handle = mod.conv2d_backward_kernel_weight[grid](
            x, grad_output, grad_weight,
            *x.stride(), *grad_weight.stride(), *grad_output.stride(),
            h, w, filter_size, filter_size, c_in, n, stride, stride, out_h, out_w, c_out,
            pad, pad, 1, 1,
            BLOCK_NO=bk, BLOCK_CI_HK_WK=bm, BLOCK_CO=bn, num_warps=warps,
            num_stages=FLAGGEMS_STAGES,
        )  # fmt: skip
        _common.record(
            LAST_INFO, handle, kernels=2,
            kernel_names=["zero_", "conv2d_backward_kernel_weight"],
            block_ci_hk_wk=bm, block_co=bn, block_no=bk, num_warps=warps,
            num_stages=FLAGGEMS_STAGES,
            programs=grid[0] * grid[2], steps_per_program=out_h * out_w * triton.cdiv(n, bk),
        )  # fmt: skip
        return grad_weight

    return launch
