"""SGLang's Mamba-2 per-sequence final states with SGLang's own launch: the kernel's default
16 x 16 x 16 tl.dot tiles (headdim x dstate x tokens; no autotune), Triton's default 4 warps
and 3 stages, initial states passed (a batch with cached prefixes)."""

from __future__ import annotations

from collections.abc import Callable

import torch

from foreign.sglang_ssd_varlen_states.launcher import SsdVarlenStatesConfig
from foreign.sglang_ssd_varlen_states.launcher import prepare as _prepare

CONFIG = SsdVarlenStatesConfig(
    block_m=None, block_n=None, block_k=None, num_warps=None, num_stages=None
)


def prepare(*inputs: torch.Tensor) -> Callable[[], torch.Tensor]:
    """The states buffer and the grid, outside the timed call."""
    return _prepare(CONFIG, *inputs)


def varlen_states(*inputs: torch.Tensor) -> torch.Tensor:
    return prepare(*inputs)()
