"""FlagGems' 3-D convolution forward (src/flag_gems/ops/conv3d.py, v5.0.2:
`conv3d_forward_kernel`), launched as FlagGems' `conv3d` launches it so that its launch
choices are knobs.

An implicit GEMM over an NCDHW input: the output's rows are the (sample, output depth,
row, column) positions, its columns the output channels, and its depth the input channels
times the filter's d x h x w taps.  One program per (BLOCK_NI_DO_HO_WO positions, BLOCK_CO
output channels) tile and per group walks the taps and, inside each, the input channels in
BLOCK_CI steps (one flat loop of taps x channel blocks): it gathers a [positions, BLOCK_CI]
tile of the input at the tap's shifted coordinates (masked past the channels and the
border), loads a [BLOCK_CI, BLOCK_CO] tile of the weight and accumulates one tl.dot in fp32
(allow_tf32 off), then adds the bias and stores in the input's dtype.

Here it runs a vision encoder's patch embedding (SGLang's Qwen2-VL, Qwen2.5-VL through
transformers' module, Qwen3-VL and GLM-4V: `nn.Conv3d` with stride = kernel over pixel values
viewed as [patches, channels, temporal_patch, patch, patch]): one output position per patch,
3 input channels, so each tap's BLOCK_CI-wide channel step holds 3 live channels and the
loop runs temporal_patch x patch x patch taps (392 for 2 x 14 x 14).

FlagGems' launch: `@triton.autotune` over its tuning YAML's `conv3d_forward` entries (the
nvidia backend's file; the Hopper file has no entry for it), whose first entry is 512
positions x 16 output channels x 16 input channels, 4 warps, 2 stages.  Knobs: the three
tiles, warps and stages, None keeping that entry.  FlagGems allocates the output with
torch.empty and, without a bias (Qwen2.5-VL's patch embedding has none), a zero bias with
torch.zeros per call; both are made here in `prepare`, outside the timed call.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import torch
import triton

from foreign import _common

LAST_INFO: dict[str, Any] = {}
# the first `conv3d_forward` entry of FlagGems' nvidia tune_configs.yaml
FLAGGEMS_BLOCK_NI_DO_HO_WO = 512
FLAGGEMS_BLOCK_CO = 16
FLAGGEMS_BLOCK_CI = 16
FLAGGEMS_WARPS = 4
FLAGGEMS_STAGES = 2


@dataclass(frozen=True)
class Conv3dConfig:
    block_ni_do_ho_wo: int | None = None  # None: FlagGems' 512 output positions
    block_co: int | None = None  # None: FlagGems' 16 output channels
    block_ci: int | None = None  # None: FlagGems' 16 input channels per step
    num_warps: int | None = None  # None: FlagGems' 4
    num_stages: int | None = None  # None: FlagGems' 2


def prepare(cfg: Conv3dConfig, x: torch.Tensor, weight: torch.Tensor) -> Callable[[], torch.Tensor]:
    mod = _common.load_source("flaggems_conv3d")
    if x.dim() != 5 or weight.dim() != 5 or x.shape[1] != weight.shape[1]:
        raise ValueError("x [n, c_in, d, h, w] and weight [c_out, c_in, kd, kh, kw] must agree")
    x = x.contiguous()
    weight = weight.contiguous()
    n, c_in, d, h, w = x.shape
    c_out, _, kd, kh, kw = weight.shape
    # a patch embedding: stride = kernel, no padding, no dilation, one group
    out_d, out_h, out_w = (d - kd) // kd + 1, (h - kh) // kh + 1, (w - kw) // kw + 1
    out = torch.empty(n, c_out, out_d, out_h, out_w, device=x.device, dtype=x.dtype)
    bias = torch.zeros(c_out, device=x.device, dtype=x.dtype)
    bm = cfg.block_ni_do_ho_wo or FLAGGEMS_BLOCK_NI_DO_HO_WO
    bn = cfg.block_co or FLAGGEMS_BLOCK_CO
    bk = cfg.block_ci or FLAGGEMS_BLOCK_CI
    warps = cfg.num_warps or FLAGGEMS_WARPS
    stages = cfg.num_stages or FLAGGEMS_STAGES
    grid = (triton.cdiv(n * out_d * out_h * out_w, bm), triton.cdiv(c_out, bn), 1)

    def launch() -> torch.Tensor:
        handle = mod.conv3d_forward_kernel[grid](
            x, weight, out, bias, n, d, h, w, c_out, out_d, out_h, out_w,
            *x.stride(), *weight.stride(), *out.stride(),
            c_in, kd, kh, kw, kd, kh, kw, 0, 0, 0, 1, 1, 1, groups=1,
            BLOCK_NI_DO_HO_WO=bm, BLOCK_CI=bk, BLOCK_CO=bn, num_warps=warps, num_stages=stages,
        )  # fmt: skip
        _common.record(
            LAST_INFO, handle, kernels=1, kernel_names=["conv3d_forward_kernel"],
            block_ni_do_ho_wo=bm, block_co=bn, block_ci=bk, num_warps=warps, num_stages=stages,
            programs=grid[0] * grid[1],
        )  # fmt: skip
        return out

    return launch
