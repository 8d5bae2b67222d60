"""SGLang's weight-only int4 MoE GEMM with SGLang's own launch: its default configuration
(no int4_w4a16 tuned table ships: 64 x 64 x 32 tiles in groups of 8 row blocks above
`experts` tokens, 16 x 32 x 64 ungrouped at or below), Triton's default 4 warps and 3
stages, the assignments sorted and padded by expert outside the timed call."""

from __future__ import annotations

from collections.abc import Callable

import torch

from foreign.sglang_moe_wna16.launcher import MoeWna16Config
from foreign.sglang_moe_wna16.launcher import prepare as _prepare

CONFIG = MoeWna16Config(
    block_m=None, block_n=None, block_k=None, group_m=None, num_warps=None, num_stages=None
)


def prepare(*inputs: torch.Tensor) -> Callable[[], torch.Tensor]:
    """The expert-sorted assignment ids, the block-to-expert map and the output buffer,
    outside the timed call."""
    return _prepare(CONFIG, *inputs)


def moe_wna16_gemm(*inputs: torch.Tensor) -> torch.Tensor:
    return prepare(*inputs)()
