"""xFormers' scaled index add forward (xformers/ops/_triton/k_scaled_index_add.py, v0.0.35:
`scaled_index_add_fwd_kernel`), launched as xFormers' host wrapper `scaled_index_add_fwd`
launches it, so that its launch choices are knobs.

The kernel adds a [kept, tokens, channels] source into the rows of x [batch, tokens,
channels] that the index names, in place: one program per BLOCK_SIZE_INDEX source rows,
BLOCK_SIZE_ROW tokens and BLOCK_SIZE_COL channels (a 3-D grid, in that order) loads its
source tile and the tile's destination indices, gathers the matching x tile, multiplies the
source by alpha and the LayerScale vector's BLOCK_SIZE_COL entries in fp32 (HAS_SCALING) and
stores the sum back over x, every access masked by the three extents.  No loop, no tl.dot,
no atomics (the indices are distinct).

xFormers' launch: BLOCK_SIZE_INDEX 1, BLOCK_SIZE_ROW 1, BLOCK_SIZE_COL 512, for every shape
and dtype, Triton's default warps (4) and stages (the wrapper passes none; no autotuner).
Knobs: the three tile sizes and the warps, None keeping xFormers' choice; the kernel has no
loop, so the stages are no knob.  The kernel works in place (the autograd function marks x
dirty); so that every call computes the same sum, the output buffer is made in `prepare`
and the timed call is the copy of x into it (torch's `copy_`) and the kernel.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import torch
import triton

from foreign import _common

LAST_INFO: dict[str, Any] = {}
KERNEL = "scaled_index_add_fwd_kernel"
# scaled_index_add_fwd's constants: one source row and one token a program, 512 channels
BLOCK_SIZE_INDEX = 1
BLOCK_SIZE_ROW = 1
BLOCK_SIZE_COL = 512


@dataclass(frozen=True)
class ScaledIndexAddConfig:
    block_index: int | None = None  # None: xFormers' 1 source row a program
    block_row: int | None = None  # None: xFormers' 1 token a program
    block_col: int | None = None  # None: xFormers' 512 channels a program
    num_warps: int | None = None  # None: Triton's default 4 (xFormers passes none)


def prepare(
    cfg: ScaledIndexAddConfig,
    x: torch.Tensor,
    index: torch.Tensor,
    source: torch.Tensor,
    scaling: torch.Tensor,
    alpha: float,
) -> Callable[[], torch.Tensor]:
    """x [batch, tokens, channels], index [kept] (distinct crops of x), source [kept,
    tokens, channels] with x's strides, scaling [channels]: out = x with alpha * scaling *
    source added at index (dim 0).  scaled_index_add_fwd's checks, then its launch."""
    if x.dim() != 3 or source.dim() != 3 or index.dim() != 1 or scaling.dim() != 1:
        raise ValueError("x and source must be 3-D, index and scaling vectors")
    if x.shape[1:] != source.shape[1:] or index.numel() != source.shape[0]:
        raise ValueError("source must be [index.numel(), *x.shape[1:]]")
    if not x.is_contiguous() or not source.is_contiguous():
        raise ValueError("x and source must be contiguous (the kernel takes one set of strides)")
    if scaling.numel() != x.shape[2] or scaling.stride(0) != x.stride(2):
        raise ValueError("scaling must hold one contiguous entry a channel")
    kernel = _common.load_source("xformers_scaled_index_add").scaled_index_add_fwd_kernel
    out = torch.empty_like(x)
    num_inp, num_rows, num_cols = x.shape
    num_src = source.shape[0]
    bi = cfg.block_index or BLOCK_SIZE_INDEX
    br = cfg.block_row or BLOCK_SIZE_ROW
    bc = cfg.block_col or BLOCK_SIZE_COL
    grid = (triton.cdiv(num_src, bi), triton.cdiv(num_rows, br), triton.cdiv(num_cols, bc))
    extra = {"num_warps": cfg.num_warps} if cfg.num_warps else {}
    stride0, stride1, stride2 = out.stride()
    programs = grid[0] * grid[1] * grid[2]

    def launch() -> torch.Tensor:
        out.copy_(x)  # the in-place kernel's input, fresh each call
        handle = kernel[grid](
            out, index, source, scaling, alpha, num_inp, num_src, num_rows, num_cols,
            stride0, stride1, stride2,
            BLOCK_SIZE_INDEX=bi, BLOCK_SIZE_ROW=br, BLOCK_SIZE_COL=bc, HAS_SCALING=True,
            **extra,
        )  # fmt: skip
        _common.record(
            LAST_INFO, handle, kernels=2, kernel_names=["copy_", KERNEL], block_index=bi,
            block_row=br, block_col=bc, num_warps=cfg.num_warps or 4, programs=programs,
            tile_elements=bi * br * bc,
        )  # fmt: skip
        return out

    return launch
