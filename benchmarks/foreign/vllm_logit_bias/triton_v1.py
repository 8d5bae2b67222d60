"""vLLM's logit-bias processor with vLLM's own launch: a 1024-entry list tile (the next power
of two of its tables' widths), 8192-column fill steps (fixed in apply_logit_bias), Triton's
default 4 warps and 3 stages (vLLM passes neither; no heuristic, autotuner or tuned table)."""

from __future__ import annotations

from collections.abc import Callable

import torch

from foreign.vllm_logit_bias.launcher import LogitBiasConfig
from foreign.vllm_logit_bias.launcher import prepare as _prepare

CONFIG = LogitBiasConfig(block_size=None, logits_block_size=None, num_warps=None, num_stages=None)


def prepare(*inputs: torch.Tensor) -> Callable[[], torch.Tensor]:
    """Nothing to allocate: the kernel writes into the logits."""
    return _prepare(CONFIG, *inputs)


def logit_bias(*inputs: torch.Tensor) -> torch.Tensor:
    return prepare(*inputs)()
