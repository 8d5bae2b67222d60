"""vLLM's adaptive-verification draft budget with vLLM's own launch: one program, 256
requests per step, 1024-slot counting steps, 8 warps (fixed in `assign_draft_token_budget`)
and Triton's default 3 stages (vLLM passes none; no heuristic, autotuner or tuned table)."""

from __future__ import annotations

from collections.abc import Callable

import torch

from foreign.vllm_draft_budget.launcher import BudgetConfig
from foreign.vllm_draft_budget.launcher import prepare as _prepare

CONFIG = BudgetConfig(block_reqs=None, block_size=None, num_warps=None, num_stages=None)


def prepare(
    confidence_probs: torch.Tensor, idx_mapping: torch.Tensor, capacities: torch.Tensor,
    draft_budget: int,
) -> Callable[[], torch.Tensor]:  # fmt: skip
    """The survival scratch, allocated once by vLLM's manager."""
    return _prepare(CONFIG, confidence_probs, idx_mapping, capacities, draft_budget)


def assign_budget(
    confidence_probs: torch.Tensor, idx_mapping: torch.Tensor, capacities: torch.Tensor,
    draft_budget: int,
) -> torch.Tensor:  # fmt: skip
    return prepare(confidence_probs, idx_mapping, capacities, draft_budget)()
