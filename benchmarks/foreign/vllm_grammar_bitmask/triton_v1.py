"""vLLM's structured-output grammar bitmask with vLLM's own launch: 8192-token blocks
(GRAMMAR_BITMASK_BLOCK_SIZE, fixed in structured_outputs.py) and Triton's default 4 warps
(vLLM passes none; no heuristic, autotuner or tuned table)."""

from __future__ import annotations

from collections.abc import Callable

import torch

from foreign.vllm_grammar_bitmask.launcher import BitmaskConfig
from foreign.vllm_grammar_bitmask.launcher import prepare as _prepare

CONFIG = BitmaskConfig(block_size=None, num_warps=None)


def prepare(
    logits: torch.Tensor, logits_indices: torch.Tensor, cu_num_logits: torch.Tensor,
    bitmask: torch.Tensor, positions: int,
) -> Callable[[], torch.Tensor]:  # fmt: skip
    """Nothing to allocate: the kernel writes into the logits."""
    return _prepare(CONFIG, logits, logits_indices, cu_num_logits, bitmask, positions)


def apply_bitmask(
    logits: torch.Tensor, logits_indices: torch.Tensor, cu_num_logits: torch.Tensor,
    bitmask: torch.Tensor, positions: int,
) -> torch.Tensor:  # fmt: skip
    return prepare(logits, logits_indices, cu_num_logits, bitmask, positions)()
