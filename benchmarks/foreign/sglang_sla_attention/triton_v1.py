"""SGLang's sparse-linear attention (sparse branch) with SGLang's own launch: 128 x 64 tiles
(the block map's BLKQ and BLKK, TurboDiffusion's defaults), 8 warps for a 128-wide head
(4 for 64), 3 stages; no autotune.  The output and the log-sum-exp made outside the timed
call."""

from __future__ import annotations

from collections.abc import Callable

import torch

from foreign.sglang_sla_attention.launcher import SlaAttentionConfig
from foreign.sglang_sla_attention.launcher import prepare as _prepare

CONFIG = SlaAttentionConfig(block_m=None, block_n=None, num_warps=None, num_stages=None)


def prepare(
    q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, lut: torch.Tensor
) -> Callable[[], torch.Tensor]:
    """The output, the log-sum-exp and the grid, outside the timed call."""
    return _prepare(CONFIG, q, k, v, lut)


def sla_attention(
    q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, lut: torch.Tensor
) -> torch.Tensor:
    return prepare(q, k, v, lut)()
