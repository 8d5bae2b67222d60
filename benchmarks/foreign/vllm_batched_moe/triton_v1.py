"""vLLM's expert-batched MoE GEMM with vLLM's own launch: `get_default_config` for M =
max_tokens (no tuned table for 16 experts of width 768; for the trials' 256 and 2048 rows:
64 x 128 x 64 and 128 x 128 x 64 tiles, 8 warps, 3 stages), USE_TD off, the workspace made
outside the timed call."""

from __future__ import annotations

from collections.abc import Callable

import torch

from foreign.vllm_batched_moe.launcher import BatchedMoeConfig
from foreign.vllm_batched_moe.launcher import prepare as _prepare

CONFIG = BatchedMoeConfig(block_m=None, block_n=None, block_k=None, num_warps=None, num_stages=None)


def prepare(
    a: torch.Tensor, w1: torch.Tensor, expert_num_tokens: torch.Tensor
) -> Callable[[], torch.Tensor]:
    """The [experts, max_tokens, n] workspace (zeroed once), outside the timed call."""
    return _prepare(CONFIG, a, w1, expert_num_tokens)


def batched_moe_gemm(
    a: torch.Tensor, w1: torch.Tensor, expert_num_tokens: torch.Tensor
) -> torch.Tensor:
    return prepare(a, w1, expert_num_tokens)()
