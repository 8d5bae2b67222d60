"""vLLM's lightning attention decode step with vLLM's own launch: 32-column blocks of each
head's state (`linear_attention_decode`'s default block_size) and Triton's default 4 warps
(vLLM passes none; no heuristic, autotuner or tuned table); the output made outside the
timed call, the pool updated in place."""

from __future__ import annotations

from collections.abc import Callable

import torch

from foreign.vllm_lightning_decode.launcher import LightningDecodeConfig
from foreign.vllm_lightning_decode.launcher import prepare as _prepare

CONFIG = LightningDecodeConfig(block_size=None, num_warps=None)


def prepare(
    q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, state: torch.Tensor,
    slope: torch.Tensor, slots: torch.Tensor,
) -> Callable[[], tuple[torch.Tensor, torch.Tensor]]:  # fmt: skip
    """The output, outside the timed call."""
    return _prepare(CONFIG, q, k, v, state, slope, slots)


def lightning_decode(
    q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, state: torch.Tensor,
    slope: torch.Tensor, slots: torch.Tensor,
) -> tuple[torch.Tensor, torch.Tensor]:  # fmt: skip
    return prepare(q, k, v, state, slope, slots)()
