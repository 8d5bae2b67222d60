"""vLLM's Gumbel-max sampling with vLLM's own launch: 1024-column blocks, Triton's default 4
warps and 3 stages, then the per-token combine with Triton's default 4 warps."""

from __future__ import annotations

from collections.abc import Callable

import torch

from foreign.vllm_gumbel_sample.launcher import GumbelSampleConfig
from foreign.vllm_gumbel_sample.launcher import prepare as _prepare

CONFIG = GumbelSampleConfig(block_size=None, num_warps=None, num_stages=None, combine_warps=None)


def prepare(
    logits: torch.Tensor, idx_mapping: torch.Tensor, temperature: torch.Tensor,
    seeds: torch.Tensor, pos: torch.Tensor,
) -> Callable[[], torch.Tensor]:  # fmt: skip
    """The per-block buffers, the output and the grid, outside the timed call."""
    return _prepare(CONFIG, logits, idx_mapping, temperature, seeds, pos)


def gumbel_sample(
    logits: torch.Tensor,
    idx_mapping: torch.Tensor,
    temperature: torch.Tensor,
    seeds: torch.Tensor,
    pos: torch.Tensor,
) -> torch.Tensor:
    return prepare(logits, idx_mapping, temperature, seeds, pos)()
