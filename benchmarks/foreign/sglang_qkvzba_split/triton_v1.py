"""SGLang's Qwen3-Next projection split with SGLang's own launch: one program per token and
key head, num_warps=1 and num_stages=3 as `fused_qkvzba_split_reshape_cat` passes them (no
autotuner, heuristic or tuned table); the four outputs made outside the timed call."""

from __future__ import annotations

from collections.abc import Callable

import torch

from foreign.sglang_qkvzba_split.launcher import QkvzbaSplitConfig
from foreign.sglang_qkvzba_split.launcher import prepare as _prepare

CONFIG = QkvzbaSplitConfig(num_warps=None)


def prepare(
    mixed_qkvz: torch.Tensor, mixed_ba: torch.Tensor, k_heads: int, v_heads: int,
    head_k: int, head_v: int,
) -> Callable[[], tuple[torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor]]:  # fmt: skip
    """The four outputs, outside the timed call."""
    return _prepare(CONFIG, mixed_qkvz, mixed_ba, k_heads, v_heads, head_k, head_v)


def qkvzba_split(
    mixed_qkvz: torch.Tensor, mixed_ba: torch.Tensor, k_heads: int, v_heads: int,
    head_k: int, head_v: int,
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor]:  # fmt: skip
    return prepare(mixed_qkvz, mixed_ba, k_heads, v_heads, head_k, head_v)()
