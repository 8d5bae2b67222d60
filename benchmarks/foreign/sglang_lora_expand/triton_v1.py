"""SGLang's chunked-SGMV LoRA expand with SGLang's own launch: 16-token segments (the
default --max-lora-chunk-size) and BLOCK_M 16, BLOCK_N 64, BLOCK_K 16, Triton's default 4
warps and 3 stages; the base output updated in place."""

from __future__ import annotations

from collections.abc import Callable

import torch

from foreign.sglang_lora_expand.launcher import LoraExpandConfig
from foreign.sglang_lora_expand.launcher import prepare as _prepare

CONFIG = LoraExpandConfig(
    chunk_size=None, block_n=None, block_k=None, num_warps=None, num_stages=None
)


def prepare(*inputs: torch.Tensor) -> Callable[[], torch.Tensor]:
    """The adapter permutation and segments and the grid, outside the timed call."""
    return _prepare(CONFIG, *inputs)


def lora_expand(*inputs: torch.Tensor) -> torch.Tensor:
    return prepare(*inputs)()
