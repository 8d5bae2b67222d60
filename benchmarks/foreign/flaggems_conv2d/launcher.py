"""FlagGems' 2-D convolution forward (src/flag_gems/ops/conv2d.py, v5.0.2:
`conv2d_forward_kernel`), launched as FlagGems' `Conv2d.forward` launches it so that its
launch choices are knobs.

An implicit GEMM over an NCHW input: the output's rows are the (image, output row, output
column) positions, its columns the output channels, and its depth the input channels times
the filter's taps.  One program per (BLOCK_NI_HO_WO positions, BLOCK_CO output channels)
tile and per group loops over the kh x kw taps and, inside each, over the input channels in
BLOCK_CI steps: it gathers a [positions, BLOCK_CI] tile of the input at the tap's shifted
coordinates (masked at the padded border), loads a [BLOCK_CI, BLOCK_CO] tile of the weight
and accumulates one tl.dot in fp32 (allow_tf32 off, so fp32 inputs take the exact path),
then adds the bias and stores in the output's dtype.

FlagGems' launch: `@triton.autotune` over its tuning YAML's `conv2d_forward` entries (the
nvidia backend's file; the Hopper file has no entry for it), whose first entry is 32
positions x 32 output channels x 32 input channels, 4 warps, 2 stages.  Knobs: the three
tiles, warps and stages, None keeping that entry.  FlagGems allocates the output with
torch.empty and, without a bias, a zero bias with torch.zeros per call; both are made here
in `prepare`, outside the timed call.  Stride 1, padding kernel // 2, no dilation, one
group: the "same" 3 x 3 convolution of a residual block.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import torch
import triton

from foreign import _common

LAST_INFO: dict[str, Any] = {}
# the first `conv2d_forward` entry of FlagGems' nvidia tune_configs.yaml
FLAGGEMS_BLOCK_NI_HO_WO = 32
FLAGGEMS_BLOCK_CO = 32
FLAGGEMS_BLOCK_CI = 32
FLAGGEMS_WARPS = 4
FLAGGEMS_STAGES = 2


@dataclass(frozen=True)
class Conv2dConfig:
    block_ni_ho_wo: int | None = None  # None: FlagGems' 32 output positions
    block_co: int | None = None  # None: FlagGems' 32 output channels
    block_ci: int | None = None  # None: FlagGems' 32 input channels per step
    num_warps: int | None = None  # None: FlagGems' 4
    num_stages: int | None = None  # None: FlagGems' 2


def prepare(cfg: Conv2dConfig, x: torch.Tensor, weight: torch.Tensor) -> Callable[[], torch.Tensor]:
    mod = _common.load_source("flaggems_conv2d")
    if x.dim() != 4 or weight.dim() != 4 or x.shape[1] != weight.shape[1]:
        raise ValueError("x [n, c_in, h, w] and weight [c_out, c_in, kh, kw] must agree")
    x = x.contiguous()
    weight = weight.contiguous()
    n, _, h, w = x.shape
    c_out, c_in, kh, kw = weight.shape
    pad_h, pad_w = kh // 2, kw // 2
    out_h = h + 2 * pad_h - kh + 1
    out_w = w + 2 * pad_w - kw + 1
    out = torch.empty(n, c_out, out_h, out_w, device=x.device, dtype=x.dtype)
    bias = torch.zeros(c_out, device=x.device, dtype=x.dtype)
    bm = cfg.block_ni_ho_wo or FLAGGEMS_BLOCK_NI_HO_WO
    bn = cfg.block_co or FLAGGEMS_BLOCK_CO
    bk = cfg.block_ci or FLAGGEMS_BLOCK_CI
    warps = cfg.num_warps or FLAGGEMS_WARPS
    stages = cfg.num_stages or FLAGGEMS_STAGES
    grid = (triton.cdiv(n * out_h * out_w, bm), triton.cdiv(c_out, bn), 1)

    def launch() -> torch.Tensor:
        handle = mod.conv2d_forward_kernel[grid](
            x, weight, out, bias, n, h, w, c_out, out_h, out_w,
            *x.stride(), *weight.stride(), *out.stride(),
            c_in, kh, kw, 1, 1, pad_h, pad_w, 1, 1, groups=1,
            BLOCK_NI_HO_WO=bm, BLOCK_CI=bk, BLOCK_CO=bn, num_warps=warps, num_stages=stages,
        )  # fmt: skip
        _common.record(
            LAST_INFO, handle, kernels=1, kernel_names=["conv2d_forward_kernel"],
            block_ni_ho_wo=bm, block_co=bn, block_ci=bk, num_warps=warps, num_stages=stages,
            programs=grid[0] * grid[1],
        )  # fmt: skip
        return out

    return launch
