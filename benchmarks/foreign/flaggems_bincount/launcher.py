"""FlagGems' bincount (src/flag_gems/fused/bincount.py, v5.0.2: `fused_max_bincount_kernel`),
launched as FlagGems' `bincount` launches it for unweighted ids, so that its launch choices
are knobs.

One program per BLOCK_SIZE ids loads them, takes their max with `tl.max` and folds it into
one int64 word with an atomic max, and adds 1 into the int64 histogram at each id below the
histogram's pre-sized length with one atomic add per id.  FlagGems sizes that histogram
before it knows the largest id: max(8192, 4 * n, minlength), capped at 65536 but never below
minlength, zero-filled per call with the max word (two fills).  It then reads the max back on
the host (`.item()`) and returns the first max(max + 1, minlength) counts, re-counting into a
larger histogram with `bincount_kernel` only when an id lies past the pre-sized length.

FlagGems' launch (`_select_params(n)`): BLOCK_SIZE 256 with 2 warps up to 256 ids, 256 with
4 up to 1024, 512 with 4 up to 4096, then 1024 with 4; Triton's default 3 stages (no
num_stages passed; the kernel has no loop).  Knobs: `block_size`, `num_warps`, None keeping
FlagGems' choice for the trial's n.  Here the two zero fills stay in the timed call (the
counts accumulate), the host read-back of the max is left out (with ids below minlength, as
an MoE router's are, it never changes the result) and the first `experts` counts are
returned.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import torch
import triton

from foreign import _common

LAST_INFO: dict[str, Any] = {}
PRE_SIZE_MIN, PRE_SIZE_CAP = 8192, 65536


@dataclass(frozen=True)
class BincountConfig:
    block_size: int | None = None  # None: FlagGems' _select_params(n) block
    num_warps: int | None = None  # None: FlagGems' _select_params(n) warps


def select_params(n: int) -> tuple[int, int]:
    """FlagGems' `_select_params`: (BLOCK_SIZE, num_warps) by the id count."""
    if n <= 256:
        return 256, 2
    if n <= 1024:
        return 256, 4
    if n <= 4096:
        return 512, 4
    return 1024, 4


def pre_size(n: int, minlength: int) -> int:
    """FlagGems' `_estimate_output_size`: the histogram's length before the max is known."""
    return max(min(max(PRE_SIZE_MIN, n * 4, minlength), PRE_SIZE_CAP), minlength)


def prepare(cfg: BincountConfig, ids: torch.Tensor, experts: int) -> Callable[[], torch.Tensor]:
    mod = _common.load_source("flaggems_bincount")
    if ids.dim() != 1 or not ids.is_contiguous():
        raise ValueError("ids must be a contiguous 1-D tensor")
    n = ids.numel()
    block, warps = select_params(n)
    block = cfg.block_size or block
    warps = cfg.num_warps or warps
    size = pre_size(n, experts)
    max_word = torch.zeros(1, dtype=torch.int64, device=ids.device)
    counts = torch.zeros(size, dtype=torch.int64, device=ids.device)
    grid = (triton.cdiv(n, block),)

    def launch() -> torch.Tensor:
        max_word.zero_()
        counts.zero_()
        handle = mod.fused_max_bincount_kernel[grid](
            ids, max_word, counts, n, size, BLOCK_SIZE=block, num_warps=warps
        )
        _common.record(
            LAST_INFO, handle, kernels=3,
            kernel_names=["zero_", "zero_", "fused_max_bincount_kernel"],
            block_size=block, num_warps=warps, programs=grid[0], pre_size=size,
        )  # fmt: skip
        return counts[:experts]

    return launch
