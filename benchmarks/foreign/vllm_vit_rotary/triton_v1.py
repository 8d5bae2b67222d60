"""vLLM's ViT rotary with vLLM's own launch (`apply_rotary`, non-interleaved as
`ApplyRotaryEmb.forward_cuda` calls it for a NeoX-style rope): the smallest of 32, 64, 128,
256 columns covering the rotary dims, 8 tokens per program up to 128 rotary dims (else 4),
2 warps up to 64 rotary dims (else 4), Triton's default stages (no heuristic, autotuner or
tuned table); the output made outside the timed call."""

from __future__ import annotations

from collections.abc import Callable

import torch

from foreign.vllm_vit_rotary.launcher import VitRotaryConfig
from foreign.vllm_vit_rotary.launcher import prepare as _prepare

CONFIG = VitRotaryConfig(block_m=None, block_k=None, num_warps=None)


def prepare(x: torch.Tensor, cos: torch.Tensor, sin: torch.Tensor) -> Callable[[], torch.Tensor]:
    """The output buffer, outside the timed call."""
    return _prepare(CONFIG, x, cos, sin)


def rotary(x: torch.Tensor, cos: torch.Tensor, sin: torch.Tensor) -> torch.Tensor:
    return prepare(x, cos, sin)()
