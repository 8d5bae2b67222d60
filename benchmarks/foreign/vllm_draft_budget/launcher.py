"""vLLM's adaptive-verification draft budget (vllm/v1/worker/gpu/spec_decode/
adaptive_verification.py, v0.34.0: `_assign_draft_token_budget_kernel` and its helper
`_count_survival_at_least`), launched as vLLM's `assign_draft_token_budget` launches it, so
that its launch choices are knobs.

One program for the whole batch.  It walks the requests BLOCK_REQS at a time, multiplies
each request's per-step draft confidences (gathered through idx_mapping) into running
survival probabilities and stores their fp32 bits as int32 into the survival scratch (-1
for a step at or past the request's scheduled drafts); then binary-searches, over the
31-bit space of non-negative float bits, the largest threshold that still admits
`draft_budget` slots, each probe a count of the whole scratch in BLOCK_SIZE steps; then
walks the requests again, admits every slot above the threshold and hands out the ties in
request order (a cumsum over the block and a carried remainder), and stores each request's
admitted count into `capacities`, in place.

vLLM's launch: grid (1,), BLOCK_REQS 256, BLOCK_SIZE 1024, 8 warps, Triton's default 3
stages (vLLM passes none).  Knobs: the two blocks, the warps and the stages, None keeping
vLLM's.  The survival scratch (allocated once by vLLM's manager) is made in `prepare`.
Repeated calls are idempotent: once the admitted counts sum to the budget, every eligible
slot is admitted again.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import torch

from foreign import _common

LAST_INFO: dict[str, Any] = {}
VLLM_BLOCK_REQS = 256
VLLM_BLOCK_SIZE = 1024
VLLM_WARPS = 8
TRITON_DEFAULT_STAGES = 3


@dataclass(frozen=True)
class BudgetConfig:
    block_reqs: int | None = None  # None: vLLM's 256 requests per step
    block_size: int | None = None  # None: vLLM's 1024 slots per counting step
    num_warps: int | None = None  # None: vLLM's 8
    num_stages: int | None = None  # None: Triton's default 3 (vLLM passes none)


def prepare(
    cfg: BudgetConfig, confidence_probs: torch.Tensor, idx_mapping: torch.Tensor,
    capacities: torch.Tensor, draft_budget: int,
) -> Callable[[], torch.Tensor]:  # fmt: skip
    mod = _common.load_source("vllm_draft_budget")
    block_reqs = cfg.block_reqs or VLLM_BLOCK_REQS
    block_size = cfg.block_size or VLLM_BLOCK_SIZE
    for name, val in (("block_reqs", block_reqs), ("block_size", block_size)):
        if val & (val - 1):
            raise ValueError(f"{name} {val} must be a power of two (tl.arange)")
    warps = cfg.num_warps or VLLM_WARPS
    stages = cfg.num_stages or TRITON_DEFAULT_STAGES
    num_reqs = idx_mapping.shape[0]
    num_steps = confidence_probs.shape[1]
    survival = torch.empty(
        confidence_probs.shape[0] * num_steps, dtype=torch.int32, device=capacities.device
    )

    def launch() -> torch.Tensor:
        handle = mod._assign_draft_token_budget_kernel[(1,)](
            confidence_probs, confidence_probs.stride(0), idx_mapping, capacities,
            survival, num_reqs, draft_budget, NUM_STEPS=num_steps, BLOCK_REQS=block_reqs,
            BLOCK_SIZE=block_size, num_warps=warps, num_stages=stages,
        )  # fmt: skip
        _common.record(
            LAST_INFO, handle, kernels=1,
            kernel_names=["_assign_draft_token_budget_kernel"], block_reqs=block_reqs,
            block_size=block_size, num_warps=warps, num_stages=stages, programs=1,
        )  # fmt: skip
        return capacities

    return launch
