"""SGLang's per-token-group fp8 quantization with SGLang's own launch: one program per
group, the group in one power-of-two block, min(max(block // 256, 1), 8) warps (1 for
128-wide groups), one stage, row-major scales."""

from __future__ import annotations

from collections.abc import Callable

import torch

from foreign.sglang_fp8_group_quant.launcher import Fp8GroupQuantConfig
from foreign.sglang_fp8_group_quant.launcher import prepare as _prepare

CONFIG = Fp8GroupQuantConfig(num_warps=None)


def prepare(x: torch.Tensor, group: int) -> Callable[[], tuple[torch.Tensor, torch.Tensor]]:
    """The fp8 rows and scales buffers, outside the timed call."""
    return _prepare(CONFIG, x, group)


def per_token_group_quant_fp8(x: torch.Tensor, group: int) -> tuple[torch.Tensor, torch.Tensor]:
    return prepare(x, group)()
