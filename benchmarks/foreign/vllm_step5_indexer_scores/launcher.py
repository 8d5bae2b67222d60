"""Step5's paged fp8 indexer scores (vllm/models/step5/common/ops/sparse_indexer_scores.py,
v0.34.0: `_paged_scores_sm90`), launched as vLLM's `paged_mqa_logits_sm90` launches it on
Hopper (compute capability 9.0: `Step5FlashInferSparse` takes it instead of FlashInfer's
`fp8_paged_mqa_logits`), so that its launch choices are knobs.

The grid is (pairs x 2 rows, cdiv(regions, TILE)): each program loads its row's query
[256, 16] in fp8 (heads past the real ones masked to zero), gathers TILE regions' fp8 keys
[TILE, 256] from their pages through the pair's table, one fp8 tl.dot into fp32, relu, the
head weights summed in four FMA chains (tl.gather), times each region's fp32 scale, and
stores TILE scores (-inf past the pair's length).  No loop: the stages are no knob.

vLLM's launch: TILE 32 (a literal in `paged_mqa_logits_sm90`), 4 warps, Triton's default
stages.  Knobs: the tile and the warps, None keeping vLLM's.  vLLM's per-call output is
made in `prepare`.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import torch
import triton

from foreign import _common

LAST_INFO: dict[str, Any] = {}
VLLM_TILE = 32
VLLM_WARPS = 4


@dataclass(frozen=True)
class IndexerScoresConfig:
    tile: int | None = None  # None: vLLM's 32 regions per program
    num_warps: int | None = None  # None: vLLM's 4


def prepare(
    cfg: IndexerScoresConfig, q: torch.Tensor, kv: torch.Tensor, weights: torch.Tensor,
    block_tables: torch.Tensor, seq_lens: torch.Tensor, regions: int,
) -> Callable[[], torch.Tensor]:  # fmt: skip
    mod = _common.load_source("vllm_step5_indexer_scores")
    tile = cfg.tile or VLLM_TILE
    if tile & (tile - 1) or tile < 16:
        raise ValueError(f"tile {tile} must be a power of two of at least 16 (tl.dot)")
    warps = cfg.num_warps or VLLM_WARPS
    batch, next_n, heads, dim = q.shape
    if q.dtype != torch.float8_e4m3fn or dim != 256 or heads not in (4, 8, 16):
        raise ValueError("q [pairs, next_n, 4/8/16 heads, 256] fp8 e4m3, as vLLM asserts")
    if kv.dtype != torch.uint8 or tuple(kv.shape[2:]) != (1, 260):
        raise ValueError("kv [pages, page, 1, 260] uint8, as vLLM asserts")
    out = torch.empty((batch * next_n, regions), dtype=torch.float32, device=q.device)
    grid = (batch * next_n, triton.cdiv(regions, tile))

    def launch() -> torch.Tensor:
        handle = mod._paged_scores_sm90[grid](
            q, kv, weights, seq_lens, block_tables, out, *q.stride()[:3], *weights.stride(),
            kv.stride(0), *block_tables.stride(), seq_lens.stride(0), regions, next_n, heads,
            kv.shape[1], tile, num_warps=warps,
        )  # fmt: skip
        _common.record(
            LAST_INFO, handle, kernels=1, kernel_names=["_paged_scores_sm90"], tile=tile,
            num_warps=warps, programs=grid[0] * grid[1],
        )  # fmt: skip
        return out

    return launch
