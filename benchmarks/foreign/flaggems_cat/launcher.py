"""FlagGems' cat (src/flag_gems/ops/cat.py, v5.0.2: `cat_copy_func_kernel_4`), launched as
FlagGems' `cat` launches it for two contiguous tensors joined over their last dimension, so
that its launch choices are knobs.

FlagGems copies up to four inputs per launch: grid row y takes input y, and each program of
a row copies BLOCK_X consecutive elements of that input, decoding each flat index into
(leading index, index along the joined dimension, trailing index) by two integer divisions
and a remainder and storing it at its output index (the joined index shifted by the
earlier inputs' sizes).  The grid's width is set by the largest input, so the rows of the
smaller inputs end with programs that find nothing to copy and return masked.

FlagGems' launch: BLOCK_X fixed at 1024 in `cat`, Triton's default 4 warps (it passes
none); no autotune, no loop (the stages are no knob).  Knobs: the block and the warps, None
keeping FlagGems'.  FlagGems allocates the output per call; here it is made in `prepare`.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import torch
import triton

from foreign import _common

LAST_INFO: dict[str, Any] = {}
FLAGGEMS_BLOCK = 1024  # cat's BLOCK
TRITON_DEFAULT_WARPS = 4


@dataclass(frozen=True)
class CatConfig:
    block_x: int | None = None  # None: FlagGems' 1024 input elements per program
    num_warps: int | None = None  # None: Triton's default 4 (FlagGems passes none)


def prepare(cfg: CatConfig, a: torch.Tensor, b: torch.Tensor) -> Callable[[], torch.Tensor]:
    mod = _common.load_source("flaggems_cat")
    if a.dim() != b.dim() or a.shape[:-1] != b.shape[:-1] or a.dtype != b.dtype:
        raise ValueError("a and b must agree in every dimension but the last, and in dtype")
    if not (a.is_contiguous() and b.is_contiguous()):
        raise ValueError("a and b must be contiguous (FlagGems copies them otherwise)")
    block = cfg.block_x or FLAGGEMS_BLOCK
    warps = cfg.num_warps or TRITON_DEFAULT_WARPS
    size_a, size_b = a.shape[-1], b.shape[-1]
    size_out = size_a + size_b
    out = torch.empty((*a.shape[:-1], size_out), dtype=a.dtype, device=a.device)
    n_a, n_b = a.numel(), b.numel()
    grid = (triton.cdiv(max(n_a, n_b), block), 2)
    dim_prod_post = 1  # the joined dimension is the last

    def launch() -> torch.Tensor:
        # FlagGems' unused slots: the first input, size 0, offset 0, 0 elements
        handle = mod.cat_copy_func_kernel_4[grid](
            out, a, b, a, a, size_a, size_b, 0, 0, size_out, dim_prod_post, 0, size_a, 0, 0,
            n_a, n_b, 0, 0, BLOCK_X=block, num_warps=warps,
        )  # fmt: skip
        _common.record(
            LAST_INFO, handle, kernels=1, kernel_names=["cat_copy_func_kernel_4"],
            block_x=block, num_warps=warps, programs=grid[0] * grid[1],
        )  # fmt: skip
        return out

    return launch
