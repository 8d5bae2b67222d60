"""SGLang's chunked-SGMV LoRA shrink with SGLang's own launch: 16-token segments (the
default --max-lora-chunk-size) and BLOCK_M 16, BLOCK_N 16, BLOCK_K 256, Triton's default 4
warps and 3 stages; the grid's second axis the segments (the batch size for a decode batch,
as SGLang's CUDA graph launches it)."""

from __future__ import annotations

from collections.abc import Callable

import torch

from foreign.sglang_lora_shrink.launcher import LoraShrinkConfig
from foreign.sglang_lora_shrink.launcher import prepare as _prepare

CONFIG = LoraShrinkConfig(
    chunk_size=None, block_n=None, block_k=None, num_warps=None, num_stages=None
)


def prepare(*inputs: object) -> Callable[[], torch.Tensor]:
    """The adapter permutation and segments, the output buffer and the grid, outside the
    timed call."""
    return _prepare(CONFIG, *inputs)  # type: ignore[arg-type]


def lora_shrink(*inputs: object) -> torch.Tensor:
    return prepare(*inputs)()
