"""SGLang's lightning attention inter-block launches with SGLang's own configuration:
256-token blocks, CBLOCK 64 for the block states and the output, one feature block,
Triton's default 4 warps and 3 stages; o and the KV history updated in place."""

from __future__ import annotations

from collections.abc import Callable

import torch

from foreign.sglang_lightning_inter.launcher import LightningInterConfig
from foreign.sglang_lightning_inter.launcher import prepare as _prepare

CONFIG = LightningInterConfig(cblock_kv=None, cblock_out=None, num_warps=None, num_stages=None)


def prepare(*inputs: torch.Tensor) -> Callable[[], tuple[torch.Tensor, torch.Tensor]]:
    """The keys' decay table, the block-state buffer and the grids, outside the timed
    call."""
    return _prepare(CONFIG, *inputs)


def lightning_inter(*inputs: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    return prepare(*inputs)()
