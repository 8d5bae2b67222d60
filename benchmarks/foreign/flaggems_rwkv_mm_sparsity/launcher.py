"""FlagGems' RWKV sparse matrix product (src/flag_gems/fused/rwkv_mm_sparsity.py, v5.0.2:
`rwkv_mm_sparsity_kernel`), launched as FlagGems' `rwkv_mm_sparsity` launches it, so that
its launch choices are knobs.

k is the channel mix's squared-ReLU key vector [K] (most of it zero) and v the value
weight [K, N] (row-major, RWKV's pre-transposed `ffn.value.weight`); out [N] = k @ v.  One
program per block_size output columns walks k in blk_size-row steps: it loads blk_size
keys, then the blk_size x block_size tile of v under a mask that drops every row whose key
is zero (those rows are never read), multiplies in fp32, sums the tile over its rows into
block_size fp32 totals and, after the last step, stores the totals in k's dtype.

FlagGems' launch: no autotune; the wrapper fixes blk_size = 512 rows per step and
block_size = 16 columns per program and passes no warps or stages (Triton's defaults, 4
and 3).  Its k_size, the loop's bound and the keys' mask, is the next power of two of K,
so for a K that is not a power of two the kernel reads past k's end (and the matching rows
past v's): the launcher refuses such a K.  Knobs: the rows per step, the columns per
program, the warps and the stages, None keeping FlagGems' values; the launcher refuses a
tile above 32,768 elements (blk_size x block_size, the loaded tile of v).  FlagGems
allocates the output per call; here it is made in `prepare`.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import torch
import triton

from foreign import _common

LAST_INFO: dict[str, Any] = {}
FLAGGEMS_BLK_SIZE = 512  # rows of v per loop step (triton.next_power_of_2(512))
FLAGGEMS_BLOCK_SIZE = 16  # output columns per program (triton.next_power_of_2(16))
TRITON_DEFAULT_WARPS = 4
TRITON_DEFAULT_STAGES = 3
MAX_TILE = 32768


@dataclass(frozen=True)
class RwkvMmSparsityConfig:
    blk_size: int | None = None  # None: FlagGems' 512 rows of v per step
    block_size: int | None = None  # None: FlagGems' 16 output columns per program
    num_warps: int | None = None  # None: Triton's default 4 (FlagGems passes none)
    num_stages: int | None = None  # None: Triton's default 3 (FlagGems passes none)


def prepare(
    cfg: RwkvMmSparsityConfig, k: torch.Tensor, v: torch.Tensor
) -> Callable[[], torch.Tensor]:
    mod = _common.load_source("flaggems_rwkv_mm_sparsity")
    if k.dim() != 1 or v.dim() != 2 or k.shape[0] != v.shape[0] or not v.is_contiguous():
        raise ValueError("k must be [K] and v a contiguous [K, N]")
    keys, cols = v.shape
    k_size = triton.next_power_of_2(keys)
    if k_size != keys:
        raise ValueError(f"K = {keys} is not a power of two (the kernel reads k past its end)")
    blk = cfg.blk_size or FLAGGEMS_BLK_SIZE
    block = cfg.block_size or FLAGGEMS_BLOCK_SIZE
    if blk * block > MAX_TILE:
        raise ValueError(f"a {blk} x {block} tile of v is above {MAX_TILE} elements")
    warps = cfg.num_warps or TRITON_DEFAULT_WARPS
    stages = cfg.num_stages or TRITON_DEFAULT_STAGES
    out = torch.empty(cols, device=k.device, dtype=k.dtype)
    grid = (triton.cdiv(cols, block),)

    def launch() -> torch.Tensor:
        handle = mod.rwkv_mm_sparsity_kernel[grid](
            k, v, out, cols, blk, k_size, block, num_warps=warps, num_stages=stages,
        )  # fmt: skip
        _common.record(
            LAST_INFO, handle, kernels=1, kernel_names=["rwkv_mm_sparsity_kernel"],
            blk_size=blk, block_size=block, num_warps=warps, num_stages=stages,
            programs=grid[0],
        )  # fmt: skip
        return out

    return launch
