"""vLLM's prefix-caching prefill attention with vLLM's own launch: 128 new query rows per
program, 64 new keys and 32 cached keys per step, the cached-token loop unrolled 4 times
and the new-token loop once, 4 warps and 1 stage (all fixed in `context_attention_fwd`; no
heuristic, autotuner or tuned table); the scales and the output made outside the timed
call."""

from __future__ import annotations

from collections.abc import Callable

import torch

from foreign.vllm_prefix_prefill.launcher import PrefixPrefillConfig
from foreign.vllm_prefix_prefill.launcher import prepare as _prepare

CONFIG = PrefixPrefillConfig(
    block_m=None, block_n=None, block_size=None, num_warps=None, num_stages=None
)


def prepare(
    q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, k_cache: torch.Tensor,
    v_cache: torch.Tensor, block_table: torch.Tensor, start_loc: torch.Tensor,
    seq_lens: torch.Tensor, scale: float,
) -> Callable[[], torch.Tensor]:  # fmt: skip
    """The scales and the output, outside the timed call."""
    return _prepare(CONFIG, q, k, v, k_cache, v_cache, block_table, start_loc, seq_lens, scale)


def prefix_prefill(
    q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, k_cache: torch.Tensor,
    v_cache: torch.Tensor, block_table: torch.Tensor, start_loc: torch.Tensor,
    seq_lens: torch.Tensor, scale: float,
) -> torch.Tensor:  # fmt: skip
    return prepare(q, k, v, k_cache, v_cache, block_table, start_loc, seq_lens, scale)()
