"""Step5's paged fp8 indexer scores with vLLM's own launch on Hopper: 32 regions per program
and 4 warps (literals in `paged_mqa_logits_sm90`; no heuristic, autotuner or tuned table),
Triton's default stages (the kernel has no loop); the scores made outside the timed call."""

from __future__ import annotations

from collections.abc import Callable

import torch

from foreign.vllm_step5_indexer_scores.launcher import IndexerScoresConfig
from foreign.vllm_step5_indexer_scores.launcher import prepare as _prepare

CONFIG = IndexerScoresConfig(tile=None, num_warps=None)


def prepare(
    q: torch.Tensor, kv: torch.Tensor, weights: torch.Tensor, block_tables: torch.Tensor,
    seq_lens: torch.Tensor, regions: int,
) -> Callable[[], torch.Tensor]:  # fmt: skip
    """The scores, allocated once."""
    return _prepare(CONFIG, q, kv, weights, block_tables, seq_lens, regions)


def indexer_scores(
    q: torch.Tensor, kv: torch.Tensor, weights: torch.Tensor, block_tables: torch.Tensor,
    seq_lens: torch.Tensor, regions: int,
) -> torch.Tensor:  # fmt: skip
    return prepare(q, kv, weights, block_tables, seq_lens, regions)()
