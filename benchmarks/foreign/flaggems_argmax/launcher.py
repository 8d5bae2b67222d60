"""FlagGems' argmax along the last dimension (src/flag_gems/ops/argmax.py, v5.0.2:
`argmax_kernel_inner`), launched as FlagGems' `argmax` launches it so that its launch
choices are knobs.

FlagGems takes this kernel when the reduced dimension is the last (nothing after it): one
program per row.  When the tile covers the row (ONE_TILE_PER_CTA) the program loads it once
and takes `tl.max` with indices; otherwise it walks the row's whole tiles unmasked, keeping
the running maximum and its column (a tile's maximum replaces it only when strictly
greater, and `tl.max` breaks ties to the left, so the leftmost maximum wins), then one
masked tail tile.

FlagGems' launch: `@triton.heuristics` sets TILE_N = next_pow2(N) up to 32,768 columns and
4096 above, ONE_TILE_PER_CTA = TILE_N >= N, and num_warps by the tile (4 below 2048, 8 below
4096, 16 from 4096 on), Triton's default stages, no autotuning.  Knobs: the tile and the
warps, None keeping that choice (ONE_TILE_PER_CTA follows the tile).  FlagGems makes the
input contiguous and allocates the output per call; here the output is made in `prepare`.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import torch
import triton

from foreign import _common

LAST_INFO: dict[str, Any] = {}


@dataclass(frozen=True)
class ArgmaxConfig:
    tile_n: int | None = None  # None: FlagGems' heuristic (4096 above 32,768 columns)
    num_warps: int | None = None  # None: FlagGems' heuristic by the tile (16 from 4096)


def flaggems_tile(n: int) -> int:
    """FlagGems' TILE_N for rows of n columns (argmax_heur_tile_n_inner)."""
    return triton.next_power_of_2(n) if n <= 32 * 1024 else 4096


def flaggems_warps(tile_n: int) -> int:
    """FlagGems' num_warps for a tile (argmax_heur_num_warps_inner)."""
    return 4 if tile_n < 2048 else 8 if tile_n < 4096 else 16


def prepare(cfg: ArgmaxConfig, logits: torch.Tensor) -> Callable[[], Any]:
    mod = _common.load_source("flaggems_argmax")
    if logits.dim() != 2 or not logits.is_contiguous():
        raise ValueError("logits must be a contiguous [rows, vocab] tensor")
    rows, n = logits.shape
    tile = cfg.tile_n or flaggems_tile(n)
    warps = cfg.num_warps or flaggems_warps(tile)
    one_tile = tile >= n
    out = torch.empty(rows, dtype=torch.int64, device=logits.device)

    def launch() -> torch.Tensor:
        handle = mod.argmax_kernel_inner[(rows, 1, 1)](
            logits, out, rows, n, TILE_N=tile, ONE_TILE_PER_CTA=one_tile, num_warps=warps
        )
        _common.record(
            LAST_INFO, handle, kernels=1, kernel_names=["argmax_kernel_inner"],
            tile_n=tile, num_warps=warps, one_tile_per_cta=one_tile, programs=rows,
        )  # fmt: skip
        return out

    return launch
