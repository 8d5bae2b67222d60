"""SGLang's rope-fused MLA decode stage 1 with SGLang's own launch (CUDA): BLOCK_N 32,
BLOCK_H 16, 4 warps, 2 stages; BLOCK_C and BLOCK_R the next powers of two of the latent
rank and the rope width."""

from __future__ import annotations

from collections.abc import Callable

import torch

from foreign.sglang_mla_decode_rope.launcher import MlaDecodeRopeConfig
from foreign.sglang_mla_decode_rope.launcher import prepare as _prepare

CONFIG = MlaDecodeRopeConfig(block_n=32, block_h=16, num_warps=4, num_stages=2)


def prepare(*inputs: object) -> Callable[[], tuple[torch.Tensor, torch.Tensor]]:
    """The output buffers and the grid, outside the timed call."""
    return _prepare(CONFIG, *inputs)  # type: ignore[arg-type]


def mla_decode_rope(*inputs: object) -> tuple[torch.Tensor, torch.Tensor]:
    return prepare(*inputs)()
