"""vLLM's sampled-token ranks with vLLM's own launch: 8192-column tiles (BLOCK_SIZE fixed in
`compute_topk_scores`), Triton's default 4 warps and 3 stages (vLLM passes none; no
heuristic, autotuner or tuned table)."""

from __future__ import annotations

from collections.abc import Callable

import torch

from foreign.vllm_logprob_ranks.launcher import RanksConfig
from foreign.vllm_logprob_ranks.launcher import prepare as _prepare

CONFIG = RanksConfig(block_size=None, num_warps=None, num_stages=None)


def prepare(logits: torch.Tensor, token_ids: torch.Tensor) -> Callable[[], torch.Tensor]:
    """The output, outside the timed call."""
    return _prepare(CONFIG, logits, token_ids)


def ranks(logits: torch.Tensor, token_ids: torch.Tensor) -> torch.Tensor:
    return prepare(logits, token_ids)()
