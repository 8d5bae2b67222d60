"""FlagGems' MoE gating top-k softmax with FlagGems' own launch: the expert tile the next
power of two of the experts (a multiple of 32), 1024 // that tile rows per program with 4
warps (1 row and 1 warp above 128 experts), Triton's default 3 stages (FlagGems passes
none; no autotune); the outputs made outside the timed call."""

from __future__ import annotations

from collections.abc import Callable

import torch

from foreign.flaggems_topk_softmax.launcher import TopkSoftmaxConfig
from foreign.flaggems_topk_softmax.launcher import prepare as _prepare

# fused/topk_softmax.py's fixed rule: at Qwen3 MoE's 128 experts, a 128-wide expert tile,
# 8 tokens per program, 4 warps.
CONFIG = TopkSoftmaxConfig(block_rows=None, block_experts=None, num_warps=None)


def prepare(
    gating_output: torch.Tensor, topk: int
) -> Callable[[], tuple[torch.Tensor, torch.Tensor, torch.Tensor]]:
    """The weights, ids and source rows (vLLM's per-call outputs), outside the timed call."""
    return _prepare(CONFIG, gating_output, topk)


def topk_softmax(
    gating_output: torch.Tensor, topk: int
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    return prepare(gating_output, topk)()
