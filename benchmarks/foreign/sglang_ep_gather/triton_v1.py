"""SGLang's DeepEP-normal MoE gather with SGLang's own launch: BLOCK_D 1024 hidden columns
(128 when the hidden size is no multiple of 1024), min(tokens, 1024) token programs, 2 warps,
Triton's default 3 stages (SGLang passes none; no heuristic, autotuner or tuned table)."""

from __future__ import annotations

from collections.abc import Callable

import torch

from foreign.sglang_ep_gather.launcher import EpGatherConfig
from foreign.sglang_ep_gather.launcher import prepare as _prepare

CONFIG = EpGatherConfig(block_d=None, token_programs=None, num_warps=None, num_stages=None)


def prepare(
    input_tensor: torch.Tensor, recv_topk_ids: torch.Tensor, recv_topk_weight: torch.Tensor,
    input_index: torch.Tensor,
) -> Callable[[], torch.Tensor]:  # fmt: skip
    """The output, outside the timed call."""
    return _prepare(CONFIG, input_tensor, recv_topk_ids, recv_topk_weight, input_index)


def ep_gather(
    input_tensor: torch.Tensor, recv_topk_ids: torch.Tensor, recv_topk_weight: torch.Tensor,
    input_index: torch.Tensor,
) -> torch.Tensor:  # fmt: skip
    return prepare(input_tensor, recv_topk_ids, recv_topk_weight, input_index)()
