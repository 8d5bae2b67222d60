"""vLLM's GDN prefill initial-state gather with vLLM's own launch: min(next_power_of_2(row),
1024) values per program and 8 warps, fixed in `gather_initial_states`, Triton's default 3
stages (vLLM passes none; no heuristic, autotuner or tuned table), launch_pdl on Hopper and
later as vLLM sets it; the output made outside the timed call."""

from __future__ import annotations

from collections.abc import Callable

import torch

from foreign.vllm_gdn_initial_states.launcher import InitialStatesConfig
from foreign.vllm_gdn_initial_states.launcher import prepare as _prepare

CONFIG = InitialStatesConfig(block=None, num_warps=None, num_stages=None)


def prepare(
    state: torch.Tensor, indices: torch.Tensor, has_initial_state: torch.Tensor
) -> Callable[[], torch.Tensor]:
    """The output, outside the timed call."""
    return _prepare(CONFIG, state, indices, has_initial_state)


def gather_initial_states(
    state: torch.Tensor, indices: torch.Tensor, has_initial_state: torch.Tensor
) -> torch.Tensor:
    return prepare(state, indices, has_initial_state)()
