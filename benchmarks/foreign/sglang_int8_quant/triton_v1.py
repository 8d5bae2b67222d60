"""SGLang's per-token int8 quantization with SGLang's own launch: one program per token, the
whole row in one power-of-two block, min(max(block // 256, 1), 8) warps (8 from 2048
columns), one stage."""

from __future__ import annotations

from collections.abc import Callable

import torch

from foreign.sglang_int8_quant.launcher import Int8QuantConfig
from foreign.sglang_int8_quant.launcher import prepare as _prepare

CONFIG = Int8QuantConfig(num_warps=None)


def prepare(x: torch.Tensor) -> Callable[[], tuple[torch.Tensor, torch.Tensor]]:
    """The int8 rows and scales buffers, outside the timed call."""
    return _prepare(CONFIG, x)


def per_token_quant_int8(x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    return prepare(x)()
