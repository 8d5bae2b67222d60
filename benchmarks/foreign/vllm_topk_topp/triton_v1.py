"""vLLM's combined top-k / top-p filter with vLLM's own CUDA launch: 8192-column row passes,
4096-value passes over the compacted outliers, 8 warps (all fixed in _topk_topp), Triton's
default 3 stages (vLLM passes none), min(SMs, rows) programs (132 SMs on an H100 or H200; no
autotuner or tuned table)."""

from __future__ import annotations

from collections.abc import Callable

import torch

from foreign.vllm_topk_topp.launcher import TopkToppConfig
from foreign.vllm_topk_topp.launcher import prepare as _prepare

CONFIG = TopkToppConfig(
    block_size=None, block_size_trunc=None, num_programs=None, num_warps=None, num_stages=None
)


def prepare(logits: torch.Tensor, k: torch.Tensor, p: torch.Tensor) -> Callable[[], torch.Tensor]:
    """The per-program scratch rows and the sigma tables (cached per device by vLLM)."""
    return _prepare(CONFIG, logits, k, p)


def topk_topp(logits: torch.Tensor, k: torch.Tensor, p: torch.Tensor) -> torch.Tensor:
    return prepare(logits, k, p)()
