"""vLLM's Triton prefill attention with vLLM's own launch for a vision encoder
(`context_attention_fwd` from `triton_attn_wrapper`, non-causal, no window, no sinks): 128 x
128 query and KV tiles for 16-bit inputs on Hopper (fitted to shared memory, which they fit),
8 warps for a head wider than 64, one pipeline stage (a size rule in the launcher; no
autotuner or table); the output made outside the timed call."""

from __future__ import annotations

from collections.abc import Callable

import torch

from foreign.vllm_vit_prefill_attn.launcher import VitPrefillConfig
from foreign.vllm_vit_prefill_attn.launcher import prepare as _prepare

CONFIG = VitPrefillConfig(block_m=None, block_n=None, num_warps=None, num_stages=None)


def prepare(
    q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, start_loc: torch.Tensor,
    seq_len: torch.Tensor, max_len: int,
) -> Callable[[], torch.Tensor]:  # fmt: skip
    """The output buffer and the grid, outside the timed call."""
    return _prepare(CONFIG, q, k, v, start_loc, seq_len, max_len)


def vit_prefill_attention(
    q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, start_loc: torch.Tensor,
    seq_len: torch.Tensor, max_len: int,
) -> torch.Tensor:  # fmt: skip
    return prepare(q, k, v, start_loc, seq_len, max_len)()
