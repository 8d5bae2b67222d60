"""SGLang's Kimi Delta Attention forget gate with the first of SGLang's 24 autotune
configurations: 32-token tiles, 4 warps, 2 stages; the fp32 output made in `prepare`."""

from __future__ import annotations

from collections.abc import Callable

import torch

from foreign.sglang_kda_gate.launcher import KdaGateConfig
from foreign.sglang_kda_gate.launcher import prepare as _prepare

CONFIG = KdaGateConfig(block_t=None, num_warps=None, num_stages=None)


def prepare(
    g: torch.Tensor, a_log: torch.Tensor, g_bias: torch.Tensor
) -> Callable[[], torch.Tensor]:
    """The output buffer, outside the timed call."""
    return _prepare(CONFIG, g, a_log, g_bias)


def kda_gate(g: torch.Tensor, a_log: torch.Tensor, g_bias: torch.Tensor) -> torch.Tensor:
    return prepare(g, a_log, g_bias)()
