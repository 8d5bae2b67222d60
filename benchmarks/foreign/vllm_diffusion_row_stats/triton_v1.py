"""DiffusionGemma's one-pass row statistics with vLLM's own launch: 4096-column steps and 8
warps (literals in `sample_row_stats`; no heuristic, autotuner or tuned table), Triton's
default 3 stages (vLLM passes none), the softmax written (a self-conditioned step); the
outputs made outside the timed call."""

from __future__ import annotations

from collections.abc import Callable

import torch

from foreign.vllm_diffusion_row_stats.launcher import RowStatsConfig
from foreign.vllm_diffusion_row_stats.launcher import prepare as _prepare

CONFIG = RowStatsConfig(block=None, num_warps=None, num_stages=None)


def prepare(
    logits: torch.Tensor, temps: torch.Tensor, canvas: int, seed: int
) -> Callable[[], tuple[torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor]]:
    """The argmax, sample, entropy and probs, allocated once."""
    return _prepare(CONFIG, logits, temps, canvas, seed)


def row_stats(
    logits: torch.Tensor, temps: torch.Tensor, canvas: int, seed: int
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor]:
    return prepare(logits, temps, canvas, seed)()
