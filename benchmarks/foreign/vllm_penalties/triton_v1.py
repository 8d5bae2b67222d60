"""vLLM's sampling penalties with vLLM's own launch: 8192-column blocks, Triton's default 4
warps and 3 stages."""

from __future__ import annotations

from collections.abc import Callable

import torch

from foreign.vllm_penalties.launcher import PenaltiesConfig
from foreign.vllm_penalties.launcher import prepare as _prepare

CONFIG = PenaltiesConfig(block_size=None, num_warps=None, num_stages=None)


def prepare(
    logits: torch.Tensor, idx_mapping: torch.Tensor, token_ids: torch.Tensor,
    local_pos: torch.Tensor, repetition: torch.Tensor, frequency: torch.Tensor,
    presence: torch.Tensor, prompt_mask: torch.Tensor, output_counts: torch.Tensor,
) -> Callable[[], torch.Tensor]:  # fmt: skip
    """The grid, outside the timed call."""
    return _prepare(
        CONFIG, logits, idx_mapping, token_ids, local_pos, repetition, frequency, presence,
        prompt_mask, output_counts,
    )  # fmt: skip


def penalties(
    logits: torch.Tensor,
    idx_mapping: torch.Tensor,
    token_ids: torch.Tensor,
    local_pos: torch.Tensor,
    repetition: torch.Tensor,
    frequency: torch.Tensor,
    presence: torch.Tensor,
    prompt_mask: torch.Tensor,
    output_counts: torch.Tensor,
) -> torch.Tensor:
    return prepare(
        logits, idx_mapping, token_ids, local_pos, repetition, frequency, presence,
        prompt_mask, output_counts,
    )()  # fmt: skip
