"""FlagGems' 1-D linear upsampling (src/flag_gems/ops/upsample_linear1d.py, v5.0.2:
`upsample_linear1d_kernel`), launched as FlagGems' `upsample_linear1d` launches it so that
its launch choices are knobs.

The input [batch, channels, W_in] is viewed as batch * channels rows.  The grid is (rows,
cdiv(W_out, BLOCK_SIZE)): each program takes BLOCK_SIZE output samples of one row, maps
each to its source position (out * scale + bias, clamped to the row), gathers the two
neighbouring input samples and stores their fp32 linear blend in the input dtype.  Without
align_corners (torch's default) scale is W_in / W_out and bias 0.5 * scale - 0.5.

FlagGems' launch: BLOCK_SIZE = 256, Triton's default warps (4) and stages, no autotuning.
Knobs: the block and the warps, None keeping that choice.  FlagGems allocates the output
per call; here it is made in `prepare`.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import torch
import triton

from foreign import _common

LAST_INFO: dict[str, Any] = {}
BLOCK_SIZE = 256  # upsample_linear1d's fixed block


@dataclass(frozen=True)
class UpsampleLinear1dConfig:
    block_size: int | None = None  # None: FlagGems' 256 output samples per program
    num_warps: int | None = None  # None: Triton's default 4 (FlagGems passes none)


def prepare(cfg: UpsampleLinear1dConfig, x: torch.Tensor, out_len: int) -> Callable[[], Any]:
    mod = _common.load_source("flaggems_upsample_linear1d")
    if x.dim() != 3 or not x.is_contiguous():
        raise ValueError("x must be a contiguous [batch, channels, length] tensor")
    batch, channels, w_in = x.shape
    rows = batch * channels
    scale = w_in / out_len  # align_corners=False, no scale factor given: FlagGems' choice
    bias = 0.5 * scale - 0.5
    block = cfg.block_size or BLOCK_SIZE
    warps = cfg.num_warps or 4
    grid = (rows, triton.cdiv(out_len, block))
    out = torch.empty(batch, channels, out_len, dtype=x.dtype, device=x.device)

    def launch() -> torch.Tensor:
        handle = mod.upsample_linear1d_kernel[grid](
            x, out, rows, w_in, out_len, scale, bias, BLOCK_SIZE=block, num_warps=warps
        )
        _common.record(
            LAST_INFO, handle, kernels=1, kernel_names=["upsample_linear1d_kernel"],
            block_size=block, num_warps=warps, programs=grid[0] * grid[1],
        )  # fmt: skip
        return out

    return launch
