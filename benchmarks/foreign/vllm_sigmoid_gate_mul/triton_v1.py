"""vLLM's fused sigmoid gate with vLLM's own launch: `fused_sigmoid_gate_mul`'s choice for
the hidden size (1024 columns and 4 warps at Qwen3-Next's 4096; no autotune, the kernel has
no loop); the output made outside the timed call."""

from __future__ import annotations

from collections.abc import Callable

import torch

from foreign.vllm_sigmoid_gate_mul.launcher import SigmoidGateMulConfig
from foreign.vllm_sigmoid_gate_mul.launcher import prepare as _prepare

CONFIG = SigmoidGateMulConfig(block=None, num_warps=None)


def prepare(attn: torch.Tensor, gate: torch.Tensor) -> Callable[[], torch.Tensor]:
    """The output, outside the timed call."""
    return _prepare(CONFIG, attn, gate)


def sigmoid_gate_mul(attn: torch.Tensor, gate: torch.Tensor) -> torch.Tensor:
    return prepare(attn, gate)()
