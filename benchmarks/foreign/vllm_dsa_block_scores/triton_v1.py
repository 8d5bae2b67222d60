"""vLLM's sparse-attention candidate block scores with vLLM's own launch on Hopper: 128-block
tiles, 32 programs per row (fixed in `select_candidate_blocks`), FULL_WIDTH (no DeepSelect
below compute capability 10), Triton's default 4 warps and 3 stages (vLLM passes none; no
heuristic, autotuner or tuned table)."""

from __future__ import annotations

from collections.abc import Callable

import torch

from foreign.vllm_dsa_block_scores.launcher import BlockScoresConfig
from foreign.vllm_dsa_block_scores.launcher import prepare as _prepare

CONFIG = BlockScoresConfig(tile=None, programs=None, num_warps=None, num_stages=None)


def prepare(
    logits: torch.Tensor, ends: torch.Tensor, next_n: int, block: int
) -> Callable[[], tuple[torch.Tensor, torch.Tensor]]:
    """The scores and the valid counts, allocated once."""
    return _prepare(CONFIG, logits, ends, next_n, block)


def block_scores(
    logits: torch.Tensor, ends: torch.Tensor, next_n: int, block: int
) -> tuple[torch.Tensor, torch.Tensor]:
    return prepare(logits, ends, next_n, block)()
