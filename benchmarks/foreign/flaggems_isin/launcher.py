"""FlagGems' isin by binary search (src/flag_gems/ops/isin.py, v5.0.2:
`isin_by_search_kernel` and its per-tile body `isin_by_search_impl`), launched as FlagGems'
`isin` launches it so that its launch choices are knobs.

FlagGems takes this path when either tensor has more than 12288 elements and the set has at
most 4M: the set is sorted (torch.sort), then each program takes BLOCK_M ids per tile in a
grid-stride loop over tiles and runs a lower-bound binary search for all of them at once,
log2(set) + 1 rounds of one gathered load of the sorted set each (the searches that have
ended masked off), and stores one bool per id.

FlagGems' launch: BLOCK_M = min(512, next_pow2(ids)) and 8 warps up to 2^20 ids (1024 and
8 warps up to 2^22, 2048 and 16 up to 2^23, 4096 and 32 above), as many programs as tiles
(at most 65536), no autotuning.  Knobs: the tile, the warps and the programs, None keeping
that choice.  FlagGems sorts the set in every call; here the sort is done in `prepare`, as a
user with a fixed list sorts it once.

Under the CPU interpreter only, the kernel is imported from a rewritten copy of the fetched
file in which `a and b`, `a or b` and `not a` read `a & b`, `a | b` and `a == 0`: compiled
Triton applies those operators element-wise to tensors, while Triton 3.6's interpreter
evaluates a tensor's truth as all of its elements, which would end every search at once.
"""

from __future__ import annotations

import math
import os
from collections.abc import Callable
from dataclasses import dataclass
from types import ModuleType
from typing import Any

import torch
import triton

from foreign import _common

LAST_INFO: dict[str, Any] = {}
MAX_PROGRAMS = 65536


@dataclass(frozen=True)
class IsinConfig:
    block_m: int | None = None  # None: FlagGems' table by the number of ids (512 up to 2^20)
    num_warps: int | None = None  # None: FlagGems' table (8 up to 2^22 ids)
    programs: int | None = None  # None: one per tile (at most 65536)


def flaggems_launch(m: int) -> tuple[int, int]:
    """FlagGems' (BLOCK_M, num_warps) for m ids (isin_by_search)."""
    if m <= 1048576:
        block, warps = 512, 8
    elif m <= 4194304:
        block, warps = 1024, 8
    elif m <= 8388608:
        block, warps = 2048, 16
    elif m <= 268435456:
        block, warps = 4096, 32
    else:
        block, warps = 2048, 16
    return min(block, triton.next_power_of_2(m)), warps


def _module() -> ModuleType:
    if os.environ.get("TRITON_INTERPRET") == "1":
        return _common.load_source_rewritten("flaggems_isin", _common.ElementwiseBoolOps())
    return _common.load_source("flaggems_isin")


def prepare(cfg: IsinConfig, ids: torch.Tensor, id_set: torch.Tensor) -> Callable[[], Any]:
    mod = _module()
    if ids.dim() != 1 or id_set.dim() != 1 or ids.dtype != id_set.dtype:
        raise ValueError("ids and id_set must be 1-D tensors of one dtype")
    m, n = ids.numel(), id_set.numel()
    block, warps = flaggems_launch(m)
    block = cfg.block_m or block
    warps = cfg.num_warps or warps
    tiles = triton.cdiv(m, block)
    programs = min(MAX_PROGRAMS, tiles, cfg.programs or tiles)
    tiles_per_program = triton.cdiv(tiles, programs)
    log_n = int(math.log2(n)) + 1
    sorted_set = torch.sort(id_set).values  # FlagGems sorts in every call
    out = torch.empty(m, dtype=torch.bool, device=ids.device)

    def launch() -> torch.Tensor:
        handle = mod.isin_by_search_kernel[(programs,)](
            ids, sorted_set, out, m, n, log_n, block, tiles_per_cta=tiles_per_program,
            invert=False, num_warps=warps,
        )  # fmt: skip
        _common.record(
            LAST_INFO, handle, kernels=1, kernel_names=["isin_by_search_kernel"],
            block_m=block, num_warps=warps, programs=programs,
            tiles_per_program=tiles_per_program, search_rounds=log_n,
        )  # fmt: skip
        return out

    return launch
