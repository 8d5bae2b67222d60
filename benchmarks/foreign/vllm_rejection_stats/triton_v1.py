"""vLLM's rejection-sampling logits statistics with vLLM's own launch: 8192-column blocks
(VOCAB_BLOCK_SIZE, fixed in rejection_sample) and Triton's default 4 warps (vLLM passes
none; no heuristic, autotuner or tuned table)."""

from __future__ import annotations

from collections.abc import Callable

import torch

from foreign.vllm_rejection_stats.launcher import RejectionStatsConfig
from foreign.vllm_rejection_stats.launcher import prepare as _prepare

CONFIG = RejectionStatsConfig(block_size=None, num_warps=None)


def prepare(
    target_logits: torch.Tensor, draft_logits: torch.Tensor,
    expanded_idx_mapping: torch.Tensor, expanded_local_pos: torch.Tensor,
    temperature: torch.Tensor,
) -> Callable[[], tuple[torch.Tensor, torch.Tensor, torch.Tensor]]:  # fmt: skip
    """The five partial buffers, allocated (zeroed) outside the timed call."""
    return _prepare(
        CONFIG, target_logits, draft_logits, expanded_idx_mapping, expanded_local_pos,
        temperature,
    )  # fmt: skip


def rejection_stats(
    target_logits: torch.Tensor, draft_logits: torch.Tensor,
    expanded_idx_mapping: torch.Tensor, expanded_local_pos: torch.Tensor,
    temperature: torch.Tensor,
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:  # fmt: skip
    return prepare(
        target_logits, draft_logits, expanded_idx_mapping, expanded_local_pos, temperature
    )()
