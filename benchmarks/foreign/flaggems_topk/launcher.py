"""FlagGems' top-k (src/flag_gems/ops/topk.py, v5.0.2: `topk_stage1_kernel` and
`topk_stage2_kernel`), launched as FlagGems' `topk` launches them on stock Triton, so that
its launch choices are knobs.

Two launches for the k largest values of each row and their columns.  Stage 1: one program
per (row, CHUNK_SIZE-column chunk) loads its chunk once into registers as fp32 and runs k
rounds of a max and an argmax over it, storing each round's winner and its column and
knocking it out of the chunk (set to the fp32 minimum): k candidates per chunk, in a
[rows, chunks * k] buffer.  Stage 2: one program per row loads all its chunks' candidates
(padded to the next power of two with the dtype's minimum) and sorts them with their
columns by a bitonic argsort (log2(B) (log2(B) + 1) / 2 compare-and-swap rounds over B
elements, each a reshape and two masked sums), storing the first k.

FlagGems' choices (its FlagTree-only radix kernel aside, which stock Triton lacks): chunks
of 256 columns below 1024 columns and 1024 from there on, raised to the next power of two
of k when k is larger; Triton's default 4 warps for both launches (FlagGems passes none).
Knobs: `chunk_size`, and the warps of each launch, None keeping FlagGems'.  The stage-1
loads happen once before the k rounds, so there is no loop to pipeline and no stage knob.
The candidate buffers and the outputs are allocated per call by FlagGems; here they are
made in `prepare`, outside the timed call.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import torch
import triton

from foreign import _common

LAST_INFO: dict[str, Any] = {}
TRITON_DEFAULT_WARPS = 4  # FlagGems passes no num_warps to either launch


def flaggems_chunk_size(columns: int, k: int) -> int:
    """FlagGems' heuristic: 256 below 1024 columns, 1024 from there on, at least k."""
    chunk = 256 if columns < 1024 else 1024
    return chunk if chunk >= k else triton.next_power_of_2(k)


@dataclass(frozen=True)
class TopkConfig:
    chunk_size: int | None = None  # None: FlagGems' 1024 (256 below 1024 columns), >= k
    num_warps: int | None = None  # stage 1; None: Triton's default 4
    merge_warps: int | None = None  # stage 2; None: Triton's default 4


def prepare(cfg: TopkConfig, x: torch.Tensor, k: int) -> Callable[[], Any]:
    mod = _common.load_source("flaggems_topk")
    if x.dim() != 2 or not x.is_contiguous():
        raise ValueError("x must be a contiguous [rows, columns] tensor")
    rows, columns = x.shape
    chunk = cfg.chunk_size or flaggems_chunk_size(columns, k)
    if chunk < k or chunk & (chunk - 1):
        raise ValueError("chunk_size must be a power of two no smaller than k")
    warps = cfg.num_warps or TRITON_DEFAULT_WARPS
    merge_warps = cfg.merge_warps or TRITON_DEFAULT_WARPS
    chunks = triton.cdiv(columns, chunk)
    cand = torch.empty(rows * chunks * k, device=x.device, dtype=x.dtype)
    cand_idx = torch.empty(rows * chunks * k, device=x.device, dtype=torch.int64)
    values = torch.empty(rows, k, device=x.device, dtype=x.dtype)
    indices = torch.empty(rows, k, device=x.device, dtype=torch.int64)
    candidates = chunks * k
    block = triton.next_power_of_2(candidates)

    def launch() -> tuple[torch.Tensor, torch.Tensor]:
        first = mod.topk_stage1_kernel[(rows, chunks)](
            cand, cand_idx, x, k, columns, chunk, True, num_warps=warps,
        )  # fmt: skip
        mod.topk_stage2_kernel[(rows,)](
            values, indices, cand, cand_idx, 1, k, candidates, block, True,
            num_warps=merge_warps,
        )  # fmt: skip
        _common.record(
            LAST_INFO, first, kernels=2, kernel_names=["topk_stage1_kernel", "topk_stage2_kernel"],
            chunk_size=chunk, num_warps=warps, merge_warps=merge_warps, merge_block=block,
            programs=rows * chunks,
        )  # fmt: skip
        return values, indices

    return launch
