"""FlagGems' count_nonzero along the last dimension (src/flag_gems/ops/count_nonzero.py,
v5.0.2: `count_nonzero_combin_kernel`, `count_nonzero_combin_kernel_1`), launched as
FlagGems' `count_nonzero` launches them so that its launch choices are knobs.

A row longer than 2048 is counted in two launches: first one program per row and
2048-column block compares each value with zero and stores the block's int64 count; then
one program per row sums its blocks' counts, BLOCK_SIZE of them per loop step.  The input
is read once.

FlagGems' launch: the first kernel's block is a fixed 2048 columns with Triton's default
warps (4); the second runs under `@triton.autotune` over the nvidia tuning YAML's
`count_nonzero` entry (BLOCK_SIZE in 1024, 2048, 4096; 4 warps; the loader's default 2
stages), keyed on the element count.  FlagGems' config loader generates a `gen: true`
entry's values last first (a stack), so the autotuner's list is 4096, 2048, 1024; here the
autotuner is dropped and `triton_v1` takes the YAML list's first value, 1024 (at these
widths, six block counts per row, every value loops once).  Knobs: the first kernel's block
and warps and the second's block and warps, None keeping those choices.  FlagGems zero-fills
the block counts and the output per call (both are fully written); here they are made in
`prepare`.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import torch
import triton

from foreign import _common

LAST_INFO: dict[str, Any] = {}
BLOCK_SIZE = 2048  # count_nonzero's block of the first kernel
COMBINE_BLOCK, COMBINE_WARPS, COMBINE_STAGES = 1024, 4, 2  # the YAML list's first value


@dataclass(frozen=True)
class CountNonzeroConfig:
    block_size: int | None = None  # None: FlagGems' 2048 columns per program
    num_warps: int | None = None  # None: Triton's default 4 (FlagGems passes none)
    combine_block: int | None = None  # None: the tuning YAML's first value, 1024
    combine_warps: int | None = None  # None: the tuning YAML's 4


def prepare(cfg: CountNonzeroConfig, h: torch.Tensor) -> Callable[[], Any]:
    mod = _common.load_source("flaggems_count_nonzero")
    if h.dim() != 2 or not h.is_contiguous():
        raise ValueError("h must be a contiguous [tokens, inter] tensor")
    rows, n = h.shape
    block = cfg.block_size or BLOCK_SIZE
    blocks = triton.cdiv(n, block)
    if blocks == 1:
        raise ValueError(f"rows of {n} fit one {block}-column block: FlagGems' other kernel")
    warps = cfg.num_warps or 4
    combine_block = cfg.combine_block or COMBINE_BLOCK
    combine_warps = cfg.combine_warps or COMBINE_WARPS
    counts = torch.empty(rows, blocks, dtype=torch.int64, device=h.device)
    out = torch.empty(rows, dtype=torch.int64, device=h.device)

    def launch() -> torch.Tensor:
        mod.count_nonzero_combin_kernel[(rows, blocks, 1)](
            h, counts, n, blocks, h.numel(), block, num_warps=warps
        )
        handle = mod.count_nonzero_combin_kernel_1[(rows,)](
            counts, out, blocks, counts.numel(), BLOCK_SIZE=combine_block,
            num_warps=combine_warps, num_stages=COMBINE_STAGES,
        )  # fmt: skip
        _common.record(
            LAST_INFO, handle, kernels=2,
            kernel_names=["count_nonzero_combin_kernel", "count_nonzero_combin_kernel_1"],
            block_size=block, num_warps=warps, combine_block=combine_block,
            combine_warps=combine_warps, programs=rows * blocks,
        )  # fmt: skip
        return out

    return launch
