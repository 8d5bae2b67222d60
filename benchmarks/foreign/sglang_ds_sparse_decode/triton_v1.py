"""SGLang's Double Sparsity sparse decode with SGLang's own launch: 128 heavy positions per
split (DoubleSparseAttnBackend.BLOCK_SEQ), gathered 16 at a time with 1 warp and 2 stages;
the splits merged with 4 warps and 2 stages; the fp32 split buffers made outside the timed
call."""

from __future__ import annotations

from collections.abc import Callable

import torch

from foreign.sglang_ds_sparse_decode.launcher import DsSparseDecodeConfig
from foreign.sglang_ds_sparse_decode.launcher import prepare as _prepare

CONFIG = DsSparseDecodeConfig(
    block_seq=None, block_n=None, num_warps=None, num_stages=None, merge_warps=None,
    merge_stages=None,
)  # fmt: skip


def prepare(
    q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, req_to_token: torch.Tensor,
    topk: torch.Tensor, sm_scale: float,
) -> Callable[[], torch.Tensor]:  # fmt: skip
    """The split buffers, the output and the grids, outside the timed call."""
    return _prepare(CONFIG, q, k, v, req_to_token, topk, sm_scale)


def ds_sparse_decode(
    q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, req_to_token: torch.Tensor,
    topk: torch.Tensor, sm_scale: float,
) -> torch.Tensor:  # fmt: skip
    return prepare(q, k, v, req_to_token, topk, sm_scale)()
