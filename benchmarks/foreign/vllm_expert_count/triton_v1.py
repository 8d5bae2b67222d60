"""vLLM's per-expert token count with vLLM's own launch: id blocks of
next_power_of_2(min(tokens * topk, 1024)) (fixed in `count_expert_num_tokens`), Triton's
default 4 warps and 3 stages (vLLM passes neither; no heuristic, autotuner or tuned table);
the output made outside the timed call."""

from __future__ import annotations

from collections.abc import Callable

import torch

from foreign.vllm_expert_count.launcher import ExpertCountConfig
from foreign.vllm_expert_count.launcher import prepare as _prepare

CONFIG = ExpertCountConfig(block=None, num_warps=None, num_stages=None)


def prepare(
    topk_ids: torch.Tensor, local_experts: int, expert_map: torch.Tensor | None
) -> Callable[[], torch.Tensor]:
    """The output, outside the timed call."""
    return _prepare(CONFIG, topk_ids, local_experts, expert_map)


def count(
    topk_ids: torch.Tensor, local_experts: int, expert_map: torch.Tensor | None
) -> torch.Tensor:
    return prepare(topk_ids, local_experts, expert_map)()
