"""vLLM's sparse-attention candidate block scores
(vllm/model_executor/kernels/attention/dsa/candidate_blocks.py, v0.34.0:
`_block_scores_kernel` with its NaN-propagating `_max_with_nan`), launched as vLLM's
`select_candidate_blocks` launches it on the decode path of a GPU without DeepSelect
(DeepSelect needs compute capability 10: on Hopper FULL_WIDTH is on, and every block of
the static width is scored), so that its launch choices are knobs.

The grid is (rows, 32): each row's 32 programs stride over its tiles of TILE blocks; each
tile loads [TILE, block] fp32 logits (masked past the row's visible end), reduces every
block to its maximum with NaN propagation, pins the newest visible block to +inf and
stores TILE scores.  Program 0 of a row also stores its valid block count.

vLLM's launch: 128-block tiles, 32 programs per row, Triton's default 4 warps and 3 stages
(vLLM passes none).  Knobs: the tile, the programs per row, the warps and the stages, None
keeping vLLM's.  The scores and the valid counts, made per call by vLLM, are made in
`prepare`; the top-k that follows is torch's and left out.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import torch
import triton

from foreign import _common

LAST_INFO: dict[str, Any] = {}
VLLM_TILE = 128
VLLM_PROGRAMS = 32
TRITON_DEFAULT_WARPS = 4
TRITON_DEFAULT_STAGES = 3


@dataclass(frozen=True)
class BlockScoresConfig:
    tile: int | None = None  # None: vLLM's 128 blocks per tile
    programs: int | None = None  # None: vLLM's 32 programs per row
    num_warps: int | None = None  # None: Triton's default 4 (vLLM passes none)
    num_stages: int | None = None  # None: Triton's default 3 (vLLM passes none)


def prepare(
    cfg: BlockScoresConfig, logits: torch.Tensor, ends: torch.Tensor, next_n: int, block: int
) -> Callable[[], tuple[torch.Tensor, torch.Tensor]]:
    mod = _common.load_source("vllm_dsa_block_scores")
    tile = cfg.tile or VLLM_TILE
    if tile & (tile - 1):
        raise ValueError(f"tile {tile} must be a power of two")
    programs = cfg.programs or VLLM_PROGRAMS
    warps = cfg.num_warps or TRITON_DEFAULT_WARPS
    stages = cfg.num_stages or TRITON_DEFAULT_STAGES
    rows, width = logits.shape
    nblocks = triton.cdiv(width, block)
    if tile * triton.next_power_of_2(block) > 64 * 1024:
        raise ValueError(f"a {tile} x {block} tile is over 64K values per program")
    scores = torch.empty((rows, nblocks), dtype=logits.dtype, device=logits.device)
    valid = torch.empty(rows, dtype=torch.int32, device=logits.device)
    grid = (rows, programs)

    def launch() -> tuple[torch.Tensor, torch.Tensor]:
        handle = mod._block_scores_kernel[grid](
            logits, None, ends, scores, valid, *logits.stride(), 0, ends.stride(0),
            scores.stride(0), width, nblocks, block, False, next_n, TILE=tile,
            FULL_WIDTH=True, num_warps=warps, num_stages=stages,
        )  # fmt: skip
        _common.record(
            LAST_INFO, handle, kernels=1, kernel_names=["_block_scores_kernel"], tile=tile,
            programs_per_row=programs, num_warps=warps, num_stages=stages,
            programs=rows * programs,
        )  # fmt: skip
        return scores, valid

    return launch
