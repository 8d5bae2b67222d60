"""SGLang's Triton MHA decode with SGLang's own launch: 8 KV splits per request, 64 KV rows
a step with 4 warps (kv_group_num 1) and 2 stages; the splits merged with 4 warps and 2
stages; the fp32 split buffers made outside the timed call."""

from __future__ import annotations

from collections.abc import Callable

import torch

from foreign.sglang_mha_decode.launcher import MhaDecodeConfig
from foreign.sglang_mha_decode.launcher import prepare as _prepare

CONFIG = MhaDecodeConfig(
    block_n=None, num_warps=None, num_stages=None, num_kv_splits=None, merge_warps=None,
    merge_stages=None,
)  # fmt: skip


def prepare(
    q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, kv_indptr: torch.Tensor,
    kv_indices: torch.Tensor, sm_scale: float,
) -> Callable[[], torch.Tensor]:  # fmt: skip
    """The split buffers, the split counts, the output and the grids, outside the timed call."""
    return _prepare(CONFIG, q, k, v, kv_indptr, kv_indices, sm_scale)


def mha_decode(
    q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, kv_indptr: torch.Tensor,
    kv_indices: torch.Tensor, sm_scale: float,
) -> torch.Tensor:  # fmt: skip
    return prepare(q, k, v, kv_indptr, kv_indices, sm_scale)()
