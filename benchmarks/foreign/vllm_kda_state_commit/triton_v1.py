"""vLLM's Kimi K3 KDA RecoverSSM state commit with vLLM's own launch (`commit` on its Triton
backend, fixed, no tuner): 32 state rows a program (min(next_power_of_2(V), 32)), the whole
key row (next_power_of_2(K)), 4 warps, 2 stages, every KDA layer of the rank in one launch;
the per-layer address and stride tables made outside the timed call, the state pools
updated in place."""

from __future__ import annotations

from collections.abc import Callable

import torch

from foreign.vllm_kda_state_commit.launcher import KdaCommitConfig
from foreign.vllm_kda_state_commit.launcher import prepare as _prepare

CONFIG = KdaCommitConfig(block_v=None, num_warps=None, num_stages=None)


def prepare(*inputs: object) -> Callable[[], torch.Tensor]:
    """The layers' address and stride tables and the grid, outside the timed call."""
    return _prepare(CONFIG, *inputs)  # type: ignore[arg-type]


def kda_state_commit(*inputs: object) -> torch.Tensor:
    return prepare(*inputs)()
