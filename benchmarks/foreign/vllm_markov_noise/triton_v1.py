"""DSpark's precomputed Gumbel noise with vLLM's own launch: 1024-token blocks (NOISE_BLOCK),
4 warps, Triton's default 3 stages."""

from __future__ import annotations

from collections.abc import Callable

import torch

from foreign.vllm_markov_noise.launcher import MarkovNoiseConfig
from foreign.vllm_markov_noise.launcher import prepare as _prepare

CONFIG = MarkovNoiseConfig(block_size=None, num_warps=None, num_stages=None)


def prepare(
    idx_map: torch.Tensor, pos: torch.Tensor, seeds: torch.Tensor, vocab: int
) -> Callable[[], torch.Tensor]:
    """The output and the grid, outside the timed call."""
    return _prepare(CONFIG, idx_map, pos, seeds, vocab)


def markov_noise(
    idx_map: torch.Tensor, pos: torch.Tensor, seeds: torch.Tensor, vocab: int
) -> torch.Tensor:
    return prepare(idx_map, pos, seeds, vocab)()
