"""SGLang's DP-attention token copy with SGLang's own launch: 8192 elements per program
(BLOCK_SIZE fixed in `memcpy_triton`), Triton's default 4 warps (SGLang passes none; no
heuristic, autotuner or tuned table)."""

from __future__ import annotations

from collections.abc import Callable

import torch

from foreign.sglang_dp_memcpy.launcher import DpMemcpyConfig
from foreign.sglang_dp_memcpy.launcher import prepare as _prepare

CONFIG = DpMemcpyConfig(block_size=None, num_warps=None)


def prepare(
    global_tokens: torch.Tensor, local_tokens: torch.Tensor, start: torch.Tensor,
    count: torch.Tensor,
) -> Callable[[], torch.Tensor]:  # fmt: skip
    """The grid, outside the timed call."""
    return _prepare(CONFIG, global_tokens, local_tokens, start, count)


def dp_memcpy(
    global_tokens: torch.Tensor,
    local_tokens: torch.Tensor,
    start: torch.Tensor,
    count: torch.Tensor,
) -> torch.Tensor:
    return prepare(global_tokens, local_tokens, start, count)()
