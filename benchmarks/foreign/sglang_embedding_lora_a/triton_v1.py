"""SGLang's LoRA embedding A lookup with SGLang's own launch: BLOCK_RANK 128 and Triton's
default 4 warps and 3 stages (SGLang passes none; no heuristic, autotuner or tuned table)."""

from __future__ import annotations

from collections.abc import Callable

import torch

from foreign.sglang_embedding_lora_a.launcher import EmbeddingLoraAConfig
from foreign.sglang_embedding_lora_a.launcher import prepare as _prepare

CONFIG = EmbeddingLoraAConfig(block_rank=None, num_warps=None, num_stages=None)


def prepare(
    input_ids: torch.Tensor, weights: torch.Tensor, seg_lens: torch.Tensor,
    seg_indptr: torch.Tensor, weight_indices: torch.Tensor, lora_ranks: torch.Tensor,
    max_len: int,
) -> Callable[[], torch.Tensor]:  # fmt: skip
    """The zero-filled output, outside the timed call."""
    return _prepare(
        CONFIG, input_ids, weights, seg_lens, seg_indptr, weight_indices, lora_ranks, max_len
    )


def embedding_lora_a(
    input_ids: torch.Tensor, weights: torch.Tensor, seg_lens: torch.Tensor,
    seg_indptr: torch.Tensor, weight_indices: torch.Tensor, lora_ranks: torch.Tensor,
    max_len: int,
) -> torch.Tensor:  # fmt: skip
    return prepare(input_ids, weights, seg_lens, seg_indptr, weight_indices, lora_ranks, max_len)()
