"""FlagGems' one_hot (src/flag_gems/ops/one_hot.py, v5.0.2: `one_hot_kernel`), launched as
FlagGems' `one_hot` launches it, so that its launch choices are knobs.

The ids are read as numel = tokens x topk flat int64 rows.  One program per BLOCK_M rows:
it loads their BLOCK_M ids once (masked at the end), then walks the classes in BLOCK_N
steps, comparing each id with the step's class numbers and storing the BLOCK_M x BLOCK_N
int64 results (masked at both edges) at row * classes + class.  No loads inside the loop:
the kernel is its stores.

FlagGems' launch: BLOCK_M 32 and BLOCK_N the next power of two of the classes capped at 128,
no warps or stages passed (Triton's defaults, 4 and 3).  Knobs: the rows per program, the
classes per step and the warps, None keeping FlagGems' values; the stages are no knob (the
class loop has no loads to pipeline).  FlagGems allocates the output per call (and reads the
class count from the ids with a host copy when none is given; the MoE block gives it); here
the output is made in `prepare`.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import torch
import triton

from foreign import _common

LAST_INFO: dict[str, Any] = {}
FLAGGEMS_BLOCK_M = 32
FLAGGEMS_BLOCK_N_CAP = 128
TRITON_DEFAULT_WARPS = 4
TRITON_DEFAULT_STAGES = 3


def flaggems_block_n(classes: int) -> int:
    """FlagGems' classes per step: the next power of two of the classes, at most 128."""
    return min(triton.next_power_of_2(classes), FLAGGEMS_BLOCK_N_CAP)


@dataclass(frozen=True)
class OneHotConfig:
    block_m: int | None = None  # None: FlagGems' 32 rows per program
    block_n: int | None = None  # None: FlagGems' min(next_power_of_2(classes), 128)
    num_warps: int | None = None  # None: Triton's default, 4 (FlagGems passes none)


def prepare(cfg: OneHotConfig, ids: torch.Tensor, classes: int) -> Callable[[], torch.Tensor]:
    mod = _common.load_source("flaggems_one_hot")
    if ids.dtype != torch.int64 or not ids.is_contiguous():
        raise ValueError("ids must be contiguous int64")
    numel = ids.numel()
    block_m = cfg.block_m or FLAGGEMS_BLOCK_M
    block_n = cfg.block_n or flaggems_block_n(classes)
    warps = cfg.num_warps or TRITON_DEFAULT_WARPS
    out = torch.empty((*ids.shape, classes), dtype=torch.int64, device=ids.device)
    grid = (triton.cdiv(numel, block_m),)

    def launch() -> torch.Tensor:
        handle = mod.one_hot_kernel[grid](
            ids, out, classes, numel, BLOCK_M=block_m, BLOCK_N=block_n, num_warps=warps
        )
        _common.record(
            LAST_INFO, handle, kernels=1, kernel_names=["one_hot_kernel"], block_m=block_m,
            block_n=block_n, num_warps=warps, num_stages=TRITON_DEFAULT_STAGES,
            programs=grid[0],
        )  # fmt: skip
        return out

    return launch
