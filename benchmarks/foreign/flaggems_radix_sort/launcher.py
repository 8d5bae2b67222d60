"""FlagGems' radix sort (src/flag_gems/ops/sort.py, v5.0.2: `compute_global_hist_kernel`
and `sweep`, FlagGems' `sort` for every dtype but bool), launched as its `radix_sort`
launches them so that its launch choices are knobs.

An LSD radix sort of each row, `bits_per_pass` bits of the order-preserving unsigned key
per pass (32 / 4 = 8 passes for fp32 keys):
  1. the histogram: one program per row and `hist_tile_n * hist_tiles_per_program` columns
     counts, for every pass at once, each digit's occurrences (`hist_tile_r` bins per
     step, a [bins, columns] compare matrix summed), and adds them atomically into a
     [rows, passes, 2**bits] int32 table;
  2. torch turns that table into each bin's exclusive prefix (cumsum minus itself, cast to
     uint32);
  3. per pass, one program per row, `sweep_tile_n` columns and `sweep_tile_r` bins: for
     each of its bins it counts its columns' matches, publishes the count in a status
     word and walks back over the earlier column tiles' words (a decoupled look-back,
     spinning while a tile has not published) to get its exclusive offset inside the
     bin, then scatters its keys and their column ids to bin start + offset + rank.
     The status words are zeroed before every pass.

FlagGems' launch: no autotuning; its `radix_sort` fixes 4 bits per pass, 1024-column
histogram tiles, 8 per program, 16 bins per step; 2048-column sweep tiles, 8 bins per
program; Triton's default 4 warps for both.  FlagGems clones the input, makes the column
ids (an arange), the ping-pong buffers and the status words per call; here the column ids,
the buffers, the table and the status words are made in `prepare` and the first pass reads
the input itself (the clone only kept FlagGems' ping-pong off its input), while the
table's zeroing, torch's prefix and every pass's status zeroing stay in the timed call.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import torch
import triton

from foreign import _common

LAST_INFO: dict[str, Any] = {}
# the constants of FlagGems' radix_sort (sort_stable passes 4 bits for every dtype but bool)
FLAGGEMS_BITS = 4
FLAGGEMS_HIST_TILE_N = 1024
FLAGGEMS_HIST_TILES = 8
FLAGGEMS_HIST_TILE_R = 16
FLAGGEMS_SWEEP_TILE_N = 2048
FLAGGEMS_SWEEP_TILE_R = 8
TRITON_DEFAULT_WARPS = 4  # FlagGems passes no num_warps to either launch


@dataclass(frozen=True)
class RadixSortConfig:
    bits_per_pass: int | None = None  # None: FlagGems' 4 (16 bins, 8 passes over fp32)
    hist_tile_n: int | None = None  # None: FlagGems' 1024 columns per histogram step
    hist_tiles_per_program: int | None = None  # None: FlagGems' 8
    hist_tile_r: int | None = None  # None: FlagGems' 16 bins per histogram step
    sweep_tile_n: int | None = None  # None: FlagGems' 2048 columns per sweep program
    sweep_tile_r: int | None = None  # None: FlagGems' 8 bins per sweep program
    num_warps: int | None = None  # histogram; None: Triton's default 4
    sweep_warps: int | None = None  # sweeps; None: Triton's default 4


def prepare(cfg: RadixSortConfig, x: torch.Tensor) -> Callable[[], Any]:
    mod = _common.load_source("flaggems_radix_sort")
    if x.dim() != 2 or not x.is_contiguous() or x.dtype != torch.float32:
        raise ValueError("x must be a contiguous fp32 [rows, columns] tensor")
    m, n = x.shape
    bits = cfg.bits_per_pass or FLAGGEMS_BITS
    hist_n = cfg.hist_tile_n or FLAGGEMS_HIST_TILE_N
    hist_tiles = cfg.hist_tiles_per_program or FLAGGEMS_HIST_TILES
    hist_r = cfg.hist_tile_r or FLAGGEMS_HIST_TILE_R
    sweep_n = cfg.sweep_tile_n or FLAGGEMS_SWEEP_TILE_N
    sweep_r = cfg.sweep_tile_r or FLAGGEMS_SWEEP_TILE_R
    warps = cfg.num_warps or TRITON_DEFAULT_WARPS
    sweep_warps = cfg.sweep_warps or TRITON_DEFAULT_WARPS
    bins = 2**bits
    if hist_r > bins:
        # the histogram's last bin step would add past its pass's bins
        raise ValueError("hist_tile_r must not exceed the 2**bits_per_pass bins")
    passes = triton.cdiv(32, bits)
    hist_grid = (m * triton.cdiv(n, hist_n * hist_tiles),)
    grid_n = triton.cdiv(n, sweep_n)
    sweep_grid = (m * grid_n, triton.cdiv(bins, sweep_r))
    hist = torch.empty(m, passes, bins, device=x.device, dtype=torch.int32)
    status = torch.empty(m, bins, grid_n, device=x.device, dtype=torch.uint32)
    ids = torch.arange(n, dtype=torch.int64, device=x.device).broadcast_to(m, n).contiguous()
    keys = (torch.empty_like(x), torch.empty_like(x))
    cols = (torch.empty_like(ids), torch.empty_like(ids))

    def launch() -> tuple[torch.Tensor, torch.Tensor]:
        hist.zero_()
        handle = mod.compute_global_hist_kernel[hist_grid](
            x, hist, passes, m, n, hist_tiles, hist_n, hist_r, bits, False, num_warps=warps,
        )  # fmt: skip
        offsets = (torch.cumsum(hist, -1) - hist).to(torch.uint32)
        src_k, src_c = x, ids
        for p in range(passes):
            dst_k, dst_c = keys[p % 2], cols[p % 2]
            status.zero_()
            mod.sweep[sweep_grid](
                src_k, src_c, dst_k, dst_c, offsets, status, passes, p, p * bits, m, n,
                grid_n, sweep_n, sweep_r, bits, False, num_warps=sweep_warps,
            )  # fmt: skip
            src_k, src_c = dst_k, dst_c
        _common.record(
            LAST_INFO, handle, kernels=5 + 2 * passes,
            kernel_names=["zero_", "compute_global_hist_kernel", "cumsum", "sub", "to"]
            + ["zero_", "sweep"] * passes,
            bits_per_pass=bits, hist_tile_n=hist_n, hist_tiles_per_program=hist_tiles,
            hist_tile_r=hist_r, sweep_tile_n=sweep_n, sweep_tile_r=sweep_r,
            num_warps=warps, sweep_warps=sweep_warps, passes=passes,
            programs=hist_grid[0] + passes * sweep_grid[0] * sweep_grid[1],
        )  # fmt: skip
        return src_k, src_c

    return launch
