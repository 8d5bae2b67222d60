"""vLLM's GPU n-gram speculator with vLLM's own launch: BLOCK_L from max_model_len (256 from
1024 on), the scan with 4 warps and 2 stages, the finalize with 2 warps and 1 stage (fixed
in NgramGPUSpeculator; no heuristic, autotuner or tuned table)."""

from __future__ import annotations

from collections.abc import Callable

import torch

from foreign.vllm_ngram_propose.launcher import NgramConfig
from foreign.vllm_ngram_propose.launcher import prepare as _prepare

CONFIG = NgramConfig(block_l=None, scan_warps=None, finalize_warps=None)


def prepare(
    token_ids: torch.Tensor, total_len: torch.Tensor, idx_mapping: torch.Tensor,
    num_sampled: torch.Tensor, last_sampled: torch.Tensor, min_n: int, max_n: int,
    spec_tokens: int,
) -> Callable[[], torch.Tensor]:  # fmt: skip
    """The scratch and the drafts (the speculator's persistent buffers), outside the timed
    call."""
    return _prepare(
        CONFIG, token_ids, total_len, idx_mapping, num_sampled, last_sampled, min_n, max_n,
        spec_tokens,
    )  # fmt: skip


def propose(
    token_ids: torch.Tensor, total_len: torch.Tensor, idx_mapping: torch.Tensor,
    num_sampled: torch.Tensor, last_sampled: torch.Tensor, min_n: int, max_n: int,
    spec_tokens: int,
) -> torch.Tensor:  # fmt: skip
    return prepare(
        token_ids, total_len, idx_mapping, num_sampled, last_sampled, min_n, max_n,
        spec_tokens,
    )()  # fmt: skip
