"""vLLM's causal depthwise conv1d prefill with vLLM's own launch: 8 tokens by 256 channels
per program, 2 stages, Triton's default 4 warps; the (sequence, chunk) lists and the output
made outside the timed call."""

from __future__ import annotations

from collections.abc import Callable

import torch

from foreign.vllm_causal_conv1d.launcher import CausalConv1dConfig
from foreign.vllm_causal_conv1d.launcher import prepare as _prepare

CONFIG = CausalConv1dConfig(block_m=None, block_n=None, num_warps=None, num_stages=None)


def prepare(
    x: torch.Tensor, weight: torch.Tensor, conv_states: torch.Tensor,
    query_start_loc: torch.Tensor, cache_indices: torch.Tensor, has_initial_state: torch.Tensor,
) -> Callable[[], tuple[torch.Tensor, torch.Tensor]]:  # fmt: skip
    """The per-program (sequence, chunk) lists and the output, outside the timed call."""
    return _prepare(
        CONFIG, x, weight, conv_states, query_start_loc, cache_indices, has_initial_state
    )


def causal_conv1d(
    x: torch.Tensor, weight: torch.Tensor, conv_states: torch.Tensor,
    query_start_loc: torch.Tensor, cache_indices: torch.Tensor, has_initial_state: torch.Tensor,
) -> tuple[torch.Tensor, torch.Tensor]:  # fmt: skip
    return prepare(x, weight, conv_states, query_start_loc, cache_indices, has_initial_state)()
