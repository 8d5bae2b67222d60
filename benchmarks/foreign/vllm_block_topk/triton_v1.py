"""MiniMax M3's prefill index top-k with vLLM's launch: the first of `_topk_index_kernel`'s
autotune configs (2048-block steps, 8 warps, 2 stages; the autotuner, keyed on
BLOCK_SIZE_T only, would time all six on first use), BLOCK_SIZE_T next_power_of_2(topk) as
its heuristic sets it; the output made outside the timed call."""

from __future__ import annotations

from collections.abc import Callable

import torch

from foreign.vllm_block_topk.launcher import BlockTopkConfig
from foreign.vllm_block_topk.launcher import prepare as _prepare

CONFIG = BlockTopkConfig(block_k=None, num_warps=None, num_stages=None)


def prepare(
    score: torch.Tensor, cu: torch.Tensor, prefix_lens: torch.Tensor, max_q: int, topk: int,
    init_blocks: int, local_blocks: int,
) -> Callable[[], torch.Tensor]:  # fmt: skip
    """The output, outside the timed call."""
    return _prepare(CONFIG, score, cu, prefix_lens, max_q, topk, init_blocks, local_blocks)


def index_topk(
    score: torch.Tensor,
    cu: torch.Tensor,
    prefix_lens: torch.Tensor,
    max_q: int,
    topk: int,
    init_blocks: int,
    local_blocks: int,
) -> torch.Tensor:
    return prepare(score, cu, prefix_lens, max_q, topk, init_blocks, local_blocks)()
