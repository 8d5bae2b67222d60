"""FlagGems' index_select along the last dimension (src/flag_gems/ops/index_select.py,
v5.0.2: `index_select_kernel`), launched as FlagGems' `index_select` launches it so that its
launch choices are knobs.

FlagGems moves the selected dimension last (here it already is, so no copy), then launches
a 2-D grid: program (i, j) takes BLOCK_M rows from row i * BLOCK_M and the BLOCK_N selected
columns from j * BLOCK_N, loads those columns' ids, gathers the rows' values at them (ids
outside [0, vocab) masked off) and stores the [BLOCK_M, BLOCK_N] tile contiguously.

FlagGems' launch: `@triton.heuristics` sets BLOCK_M = min(4, next_pow2(cdiv(256, N))) and
BLOCK_N = max(16, min(512, next_pow2(cdiv(N, 16)))) from the input's length N along the
dimension (1 and 512 at any vocabulary from 8192 on), Triton's default warps (4) and
stages, no autotuning.  Knobs: both tiles and the warps, None keeping that choice.
FlagGems allocates the output per call; here it is made in `prepare`.

The kernel combines its row and column masks with `and`, which compiled Triton applies
element-wise; Triton 3.6's CPU interpreter takes the row mask's truth as all of its
elements, so under the interpreter only the launcher refuses a BLOCK_M that does not divide
the rows (the last tile's row mask would be partly false and its column mask lost).
"""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import torch
import triton

from foreign import _common

LAST_INFO: dict[str, Any] = {}


@dataclass(frozen=True)
class IndexSelectConfig:
    block_m: int | None = None  # None: FlagGems' heuristic (1 from 256 columns on)
    block_n: int | None = None  # None: FlagGems' heuristic (512 from 8192 columns on)
    num_warps: int | None = None  # None: Triton's default 4 (FlagGems passes none)


def flaggems_tiles(n: int) -> tuple[int, int]:
    """FlagGems' (BLOCK_M, BLOCK_N) for an input of length n along the dimension."""
    block_m = min(4, triton.next_power_of_2(triton.cdiv(256, n)))
    block_n = max(min(triton.next_power_of_2(triton.cdiv(n, 16)), 512), 16)
    return block_m, block_n


def prepare(
    cfg: IndexSelectConfig, logits: torch.Tensor, draft_ids: torch.Tensor
) -> Callable[[], Any]:
    mod = _common.load_source("flaggems_index_select")
    if logits.dim() != 2 or not logits.is_contiguous():
        raise ValueError("logits must be a contiguous [tokens, vocab] tensor")
    if draft_ids.dim() != 1:
        raise ValueError("draft_ids must be 1-D")
    rows, n = logits.shape
    index_len = draft_ids.numel()
    heur_m, heur_n = flaggems_tiles(n)
    block_m = cfg.block_m or heur_m
    block_n = cfg.block_n or heur_n
    if os.environ.get("TRITON_INTERPRET") == "1" and rows % block_m:
        raise ValueError(
            f"under the CPU interpreter BLOCK_M ({block_m}) must divide the rows ({rows}): "
            "the kernel's `and` of its masks is read as a whole-tensor truth there"
        )
    warps = cfg.num_warps or 4
    grid = (triton.cdiv(rows, block_m), triton.cdiv(index_len, block_n))
    out = torch.empty(rows, index_len, dtype=logits.dtype, device=logits.device)

    def launch() -> torch.Tensor:
        handle = mod.index_select_kernel[grid](
            logits, out, rows, n, draft_ids, index_len, BLOCK_M=block_m, BLOCK_N=block_n,
            num_warps=warps,
        )  # fmt: skip
        _common.record(
            LAST_INFO, handle, kernels=1, kernel_names=["index_select_kernel"],
            block_m=block_m, block_n=block_n, num_warps=warps, programs=grid[0] * grid[1],
        )  # fmt: skip
        return out

    return launch
