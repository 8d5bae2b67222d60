"""SGLang's Mamba-2 decode-step state update with SGLang's own launch: at a state size of
128, 4 rows of a head's dim per program and 4 warps; the state updated in place."""

from __future__ import annotations

from collections.abc import Callable

import torch

from foreign.sglang_mamba_state_update.launcher import MambaStateUpdateConfig
from foreign.sglang_mamba_state_update.launcher import prepare as _prepare

CONFIG = MambaStateUpdateConfig(block_m=None, num_warps=None)


def prepare(*inputs: torch.Tensor) -> Callable[[], tuple[torch.Tensor, torch.Tensor]]:
    """The output buffer, the broadcast views and the grid, outside the timed call."""
    return _prepare(CONFIG, *inputs)


def state_update(*inputs: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    return prepare(*inputs)()
