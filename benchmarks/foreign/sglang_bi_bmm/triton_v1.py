"""SGLang's batch-invariant persistent bmm with SGLang's own launch: its fixed configuration
for the input's dtype (bf16: 128 x 128 x 64 tiles, GROUP_SIZE_M 8, 8 warps, 3 stages) over
min(SMs, tiles) persistent programs (no heuristic, autotuner or tuned table: the
configuration is fixed so that results do not depend on the batch)."""

from __future__ import annotations

from collections.abc import Callable

import torch

from foreign.sglang_bi_bmm.launcher import BmmConfig
from foreign.sglang_bi_bmm.launcher import prepare as _prepare

CONFIG = BmmConfig(
    block_m=None,
    block_n=None,
    block_k=None,
    group_m=None,
    programs=None,
    num_warps=None,
    num_stages=None,
)


def prepare(a: torch.Tensor, b: torch.Tensor) -> Callable[[], torch.Tensor]:
    """The output, outside the timed call."""
    return _prepare(CONFIG, a, b)


def bmm(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    return prepare(a, b)()
