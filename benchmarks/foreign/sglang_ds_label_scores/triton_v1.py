"""SGLang's Double Sparsity approximate attention with SGLang's own launch: 32 context
positions per program, 4 warps for MHA and 2 with grouped KV heads, 1 stage; the output
made outside the timed call."""

from __future__ import annotations

from collections.abc import Callable

import torch

from foreign.sglang_ds_label_scores.launcher import DsLabelScoresConfig
from foreign.sglang_ds_label_scores.launcher import prepare as _prepare

# sparse_flash_decode_stage1: BLOCK = 32; num_warps 4 if kv_group_num == 1 else 2 (2 for
# Llama 3.1 8B's four query heads per KV head); num_stages=1.  No autotune.
CONFIG = DsLabelScoresConfig(block_n=None, num_warps=None)


def prepare(
    q_label: torch.Tensor,
    k_label: torch.Tensor,
    req_to_token: torch.Tensor,
    seq_lens: torch.Tensor,
    sm_scale: float,
) -> Callable[[], torch.Tensor]:
    """The output, outside the timed call."""
    return _prepare(CONFIG, q_label, k_label, req_to_token, seq_lens, sm_scale)


def ds_label_scores(
    q_label: torch.Tensor,
    k_label: torch.Tensor,
    req_to_token: torch.Tensor,
    seq_lens: torch.Tensor,
    sm_scale: float,
) -> torch.Tensor:
    return prepare(q_label, k_label, req_to_token, seq_lens, sm_scale)()
