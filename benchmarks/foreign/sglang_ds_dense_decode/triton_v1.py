"""SGLang's Double Sparsity dense decode with SGLang's own launch: 256 positions per split
(flash_decode_attention_fwd's BLOCK_SEQ), gathered 16 at a time with 1 warp and 2 stages;
the splits merged with 4 warps and 2 stages; the fp32 split buffers made outside the timed
call."""

from __future__ import annotations

from collections.abc import Callable

import torch

from foreign.sglang_ds_dense_decode.launcher import DsDenseDecodeConfig
from foreign.sglang_ds_dense_decode.launcher import prepare as _prepare

CONFIG = DsDenseDecodeConfig(
    block_seq=None, block_n=None, num_warps=None, num_stages=None, merge_warps=None,
    merge_stages=None,
)  # fmt: skip


def prepare(
    q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, req_to_token: torch.Tensor,
    b_req_idx: torch.Tensor, seq_lens: torch.Tensor,
) -> Callable[[], torch.Tensor]:  # fmt: skip
    """The split buffers, the output and the grids, outside the timed call."""
    return _prepare(CONFIG, q, k, v, req_to_token, b_req_idx, seq_lens)


def ds_dense_decode(
    q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, req_to_token: torch.Tensor,
    b_req_idx: torch.Tensor, seq_lens: torch.Tensor,
) -> torch.Tensor:  # fmt: skip
    return prepare(q, k, v, req_to_token, b_req_idx, seq_lens)()
