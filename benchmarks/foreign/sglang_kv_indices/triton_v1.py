"""SGLang's KV index gather with SGLang's own launch: one program per request copying its
slots in 512-wide steps, Triton's default 4 warps and 3 stages, the output list allocated
outside the timed call."""

from __future__ import annotations

from collections.abc import Callable

import torch

from foreign.sglang_kv_indices.launcher import KvIndicesConfig
from foreign.sglang_kv_indices.launcher import prepare as _prepare

CONFIG = KvIndicesConfig(num_warps=None, num_stages=None)


def prepare(
    req_to_token: torch.Tensor, req_pool_indices: torch.Tensor, seq_lens: torch.Tensor,
    kv_indptr: torch.Tensor,
) -> Callable[[], torch.Tensor]:  # fmt: skip
    """The output list, outside the timed call."""
    return _prepare(CONFIG, req_to_token, req_pool_indices, seq_lens, kv_indptr)


def create_kv_indices(
    req_to_token: torch.Tensor,
    req_pool_indices: torch.Tensor,
    seq_lens: torch.Tensor,
    kv_indptr: torch.Tensor,
) -> torch.Tensor:
    return prepare(req_to_token, req_pool_indices, seq_lens, kv_indptr)()
