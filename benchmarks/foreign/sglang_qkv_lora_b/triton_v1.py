"""SGLang's fused QKV LoRA B with SGLang's own launch (`qkv_lora_b_fwd`): BLOCK_S 16,
BLOCK_OUT 64, BLOCK_R 16, Triton's default 4 warps and 3 stages; the base QKV output updated
in place."""

from __future__ import annotations

from collections.abc import Callable

import torch

from foreign.sglang_qkv_lora_b.launcher import QkvLoraBConfig
from foreign.sglang_qkv_lora_b.launcher import prepare as _prepare

CONFIG = QkvLoraBConfig(block_s=None, block_n=None, block_k=None, num_warps=None, num_stages=None)


def prepare(*inputs: torch.Tensor) -> Callable[[], torch.Tensor]:
    """The segment offsets and the grid, outside the timed call."""
    return _prepare(CONFIG, *inputs)


def qkv_lora_b(*inputs: torch.Tensor) -> torch.Tensor:
    return prepare(*inputs)()
