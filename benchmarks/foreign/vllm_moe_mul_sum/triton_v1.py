"""vLLM's weighted top-k sum of the Humming MoE experts with vLLM's own launch: the column
block and warps of `_heuristic_config` (bf16 at hidden >= 1024 on sm80 or later:
min(next_power_of_2(hidden), 4096) columns and 16 warps), 3 stages (no autotuner or tuned
table); the output made outside the timed call."""

from __future__ import annotations

from collections.abc import Callable

import torch

from foreign.vllm_moe_mul_sum.launcher import MoeMulSumConfig
from foreign.vllm_moe_mul_sum.launcher import prepare as _prepare

CONFIG = MoeMulSumConfig(block_k=None, num_warps=None, num_stages=None)


def prepare(
    inputs: torch.Tensor, topk_weights: torch.Tensor, topk_ids: torch.Tensor,
    expert_map: torch.Tensor | None,
) -> Callable[[], torch.Tensor]:  # fmt: skip
    """The output, outside the timed call."""
    return _prepare(CONFIG, inputs, topk_weights, topk_ids, expert_map)


def mul_sum(
    inputs: torch.Tensor, topk_weights: torch.Tensor, topk_ids: torch.Tensor,
    expert_map: torch.Tensor | None,
) -> torch.Tensor:  # fmt: skip
    return prepare(inputs, topk_weights, topk_ids, expert_map)()
