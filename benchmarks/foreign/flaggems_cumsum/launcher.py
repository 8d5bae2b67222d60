"""FlagGems' cumsum over the last dimension (src/flag_gems/ops/cumsum.py, v5.0.2: the row
scan's `reduce_then_scan_*_kernel_row` kernels), launched as FlagGems' `cumsum` launches
them so that its launch choices are knobs.

A row longer than 16384 is split over C programs, each owning `tiles_per_cta` consecutive
tiles of TILE_SIZE columns (C = min(tiles, 4 x the SM count)): the first launch sums each
program's tiles into an fp32 block sum per (row, program); the second, one program per
row, scans those C sums (one tile of next_pow2(C)); the third re-reads each program's
tiles and writes their inclusive scans offset by the preceding programs' total.  The input
is read twice and the output written once.  A row of 16384 or fewer is one program's
(the middle kernel alone, over the whole row).

FlagGems' launch (no autotuning, "TODO: tune on target board"): TILE_SIZE = min(4096,
next_pow2(columns)), 8 warps above 2048-column tiles and 4 below, at most 4 programs per SM
per row.  Knobs: the tile, the warps and the programs per row, None keeping that choice;
the SM count is the device's (132 on the H200, assumed on the CPU).  FlagGems allocates the
output and the two [rows, C] fp32 buffers per call; here they are made in `prepare`.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import torch
import triton

from foreign import _common

LAST_INFO: dict[str, Any] = {}
PERSISTENT_MAX = 16384  # FlagGems scans a row this long or shorter in one program
MAX_TILE = 4096
CTAS_PER_SM = 4
H200_SMS = 132


def _sms(device: torch.device) -> int:
    if device.type == "cuda":
        return int(torch.cuda.get_device_properties(device).multi_processor_count)
    return H200_SMS


@dataclass(frozen=True)
class CumsumConfig:
    tile_size: int | None = None  # None: FlagGems' min(4096, next_pow2(columns))
    num_warps: int | None = None  # None: 8 above 2048-column tiles, else 4
    programs_per_row: int | None = None  # None: min(tiles, 4 x SMs)


def prepare(cfg: CumsumConfig, probs: torch.Tensor) -> Callable[[], Any]:
    mod = _common.load_source("flaggems_cumsum")
    if probs.dim() != 2 or not probs.is_contiguous():
        raise ValueError("probs must be a contiguous [rows, vocab] tensor")
    m, n = probs.shape
    out = torch.empty_like(probs)
    if n <= PERSISTENT_MAX:
        tile = triton.next_power_of_2(n)
        warps = cfg.num_warps or (8 if tile > 2048 else 4)

        def launch_one() -> torch.Tensor:
            handle = mod.reduce_then_scan_root_scan_kernel_row[(m, 1, 1)](
                probs, out, n, tile, num_warps=warps
            )
            _common.record(
                LAST_INFO, handle, kernels=1, kernel_names=["reduce_then_scan_root_scan_kernel_row"],
                tile_size=tile, num_warps=warps, programs=m,
            )  # fmt: skip
            return out

        return launch_one
    tile = cfg.tile_size or min(MAX_TILE, triton.next_power_of_2(n))
    warps = cfg.num_warps or (8 if tile > 2048 else 4)
    tiles = triton.cdiv(n, tile)
    ctas = min(tiles, cfg.programs_per_row or CTAS_PER_SM * _sms(probs.device))
    root_tile = triton.next_power_of_2(ctas)
    tiles_per_cta = triton.cdiv(tiles, ctas)
    acc = torch.float32 if probs.dtype in (torch.float16, torch.bfloat16) else probs.dtype
    block_sums = torch.empty(m, ctas, device=probs.device, dtype=acc)
    prefix = torch.empty(m, ctas, device=probs.device, dtype=acc)

    def launch() -> torch.Tensor:
        mod.reduce_then_scan_block_sum_kernel_row[(m, ctas, 1)](  # FlagGems: (m, ctas, 1, 1)
            probs, block_sums, n, tiles_per_cta, tile, num_warps=warps
        )
        mod.reduce_then_scan_root_scan_kernel_row[(m, 1, 1)](
            block_sums, prefix, ctas, root_tile, num_warps=warps
        )
        handle = mod.reduce_then_scan_block_scan_kernel_row[(m, ctas, 1)](
            probs, prefix, out, n, ctas, tiles_per_cta, tile, num_warps=warps
        )
        _common.record(
            LAST_INFO, handle, kernels=3,
            kernel_names=["reduce_then_scan_block_sum_kernel_row",
                          "reduce_then_scan_root_scan_kernel_row",
                          "reduce_then_scan_block_scan_kernel_row"],
            tile_size=tile, num_warps=warps, programs_per_row=ctas,
            tiles_per_program=tiles_per_cta, programs=m * ctas,
        )  # fmt: skip
        return out

    return launch
