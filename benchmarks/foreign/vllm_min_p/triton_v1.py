"""vLLM's min-p filter with vLLM's own launch: 1024-column tiles (fixed in apply_min_p),
Triton's default 4 warps and 3 stages (vLLM passes neither; no heuristic, autotuner or tuned
table)."""

from __future__ import annotations

from collections.abc import Callable

import torch

from foreign.vllm_min_p.launcher import MinPConfig
from foreign.vllm_min_p.launcher import prepare as _prepare

CONFIG = MinPConfig(block_size=None, num_warps=None, num_stages=None)


def prepare(
    logits: torch.Tensor, expanded_idx_mapping: torch.Tensor, min_p: torch.Tensor
) -> Callable[[], torch.Tensor]:
    """Nothing to allocate: the kernel writes into the logits."""
    return _prepare(CONFIG, logits, expanded_idx_mapping, min_p)


def min_p(
    logits: torch.Tensor, expanded_idx_mapping: torch.Tensor, min_p: torch.Tensor
) -> torch.Tensor:
    return prepare(logits, expanded_idx_mapping, min_p)()
