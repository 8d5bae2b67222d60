"""Qwen4Exp's per-layer-embedding n-gram hash ids with vLLM's own launch: 8 tokens per
program and 4 warps (fixed in `_ple_ngram_ids`; no heuristic, autotuner or tuned table),
`launch_pdl` on compute capability 9 and above."""

from __future__ import annotations

from collections.abc import Callable

import torch

from foreign.vllm_ple_ngram_ids.launcher import NgramIdsConfig
from foreign.vllm_ple_ngram_ids.launcher import prepare as _prepare

CONFIG = NgramIdsConfig(block_t=None, num_warps=None)


def prepare(
    input_ids: torch.Tensor, query_start_loc: torch.Tensor, ngram_context: torch.Tensor,
    multipliers: torch.Tensor, sizes: torch.Tensor, offsets: torch.Tensor, eos: int,
    heads: int,
) -> Callable[[], torch.Tensor]:  # fmt: skip
    """The [tokens, (ngram - 1) x heads] int64 output, allocated once."""
    return _prepare(
        CONFIG, input_ids, query_start_loc, ngram_context, multipliers, sizes, offsets, eos,
        heads,
    )  # fmt: skip


def ngram_ids(
    input_ids: torch.Tensor, query_start_loc: torch.Tensor, ngram_context: torch.Tensor,
    multipliers: torch.Tensor, sizes: torch.Tensor, offsets: torch.Tensor, eos: int,
    heads: int,
) -> torch.Tensor:  # fmt: skip
    return prepare(
        input_ids, query_start_loc, ngram_context, multipliers, sizes, offsets, eos, heads
    )()
