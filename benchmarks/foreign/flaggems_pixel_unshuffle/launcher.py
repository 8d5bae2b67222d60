"""FlagGems' pixel_unshuffle (src/flag_gems/ops/pixel_unshuffle.py, v5.0.2:
`pixel_unshuffle_kernel`), launched as FlagGems' `pixel_unshuffle` launches it so that its
launch choices are knobs.

Space to depth over contiguous NCHW: the output [N, C * r * r, H / r, W / r] is walked in
BLOCK_SIZE consecutive elements per program; each program decodes every output index into
(n, output channel, row, column), maps the output channel to its input channel and its
(dh, dw) offset inside the r x r cell, and copies that input element.  The stores are
contiguous; the loads step r elements apart along a row (r = 2: every other element).

FlagGems' launch: BLOCK_SIZE = 1024, Triton's default warps (4) and stages, no autotuning.
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
BLOCK_SIZE = 1024  # pixel_unshuffle's fixed block


@dataclass(frozen=True)
class PixelUnshuffleConfig:
    block_size: int | None = None  # None: FlagGems' 1024 output elements per program
    num_warps: int | None = None  # None: Triton's default 4 (FlagGems passes none)


def prepare(cfg: PixelUnshuffleConfig, x: torch.Tensor, factor: int) -> Callable[[], Any]:
    mod = _common.load_source("flaggems_pixel_unshuffle")
    if x.dim() != 4 or not x.is_contiguous():
        raise ValueError("x must be a contiguous [N, C, H, W] tensor")
    n, c, h, w = x.shape
    if factor <= 0 or h % factor or w % factor:
        raise ValueError("the factor must be positive and divide H and W")
    c_out, h_out, w_out = c * factor * factor, h // factor, w // factor
    numel = x.numel()
    block = cfg.block_size or BLOCK_SIZE
    warps = cfg.num_warps or 4
    grid = (triton.cdiv(numel, block),)
    out = torch.empty(n, c_out, h_out, w_out, dtype=x.dtype, device=x.device)

    def launch() -> torch.Tensor:
        handle = mod.pixel_unshuffle_kernel[grid](
            x, out, numel, n, c, h, w, factor, c_out, h_out, w_out,
            BLOCK_SIZE=block, num_warps=warps,
        )  # fmt: skip
        _common.record(
            LAST_INFO, handle, kernels=1, kernel_names=["pixel_unshuffle_kernel"],
            block_size=block, num_warps=warps, programs=grid[0],
        )  # fmt: skip
        return out

    return launch
