"""vLLM's multi-LoRA shrink with vLLM's own launch: its default configuration (32-token by
16-rank tiles, groups of 8, 4 warps, 2 stages; 256-deep steps split 64 ways below 128
tokens, 32-deep steps split 8 ways above), the buffer zeroed in the timed call as vLLM's
`_lora_shrink` does, the adapter grouping made outside it."""

from __future__ import annotations

from collections.abc import Callable

import torch

from foreign.vllm_lora_shrink.launcher import LoraShrinkConfig
from foreign.vllm_lora_shrink.launcher import prepare as _prepare

CONFIG = LoraShrinkConfig(
    block_m=None, block_n=None, block_k=None, split_k=None, group_size_m=None,
    num_warps=None, num_stages=None,
)  # fmt: skip


def prepare(
    x: torch.Tensor, lora_a: torch.Tensor, mapping: torch.Tensor, scale: float
) -> Callable[[], torch.Tensor]:
    """The tokens grouped by adapter, the slices' weight pointers and the buffer, outside
    the timed call."""
    return _prepare(CONFIG, x, lora_a, mapping, scale)


def lora_shrink(
    x: torch.Tensor, lora_a: torch.Tensor, mapping: torch.Tensor, scale: float
) -> torch.Tensor:
    return prepare(x, lora_a, mapping, scale)()
