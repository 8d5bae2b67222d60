"""FlagGems' causal attention backward with FlagGems' own configuration: the tuning YAML's
first value of each list (BLOCK_M1 32, BLOCK_N1 128, BLOCK_M2 128, BLOCK_N2 32, 4 warps, 2
stages) on FlagGems' grid of 128 key rows per program; the buffers made outside the timed
call."""

from __future__ import annotations

from collections.abc import Callable

import torch

from foreign.flaggems_attention_bwd.launcher import AttentionBwdConfig
from foreign.flaggems_attention_bwd.launcher import prepare as _prepare

# tune_configs.yaml's attention_bwd entry (the generic nvidia file; Hopper's has none):
# metas[0] = {BLOCK_M1: 32, BLOCK_N1: 128, BLOCK_M2: 128, BLOCK_N2: 32}, warps[0] = 4,
# stages[0] = 2.  FlagGems' libtuner times all 18 generated configurations on the first
# call; triton_v1 takes the lists' first values, as for the other FlagGems specs.
CONFIG = AttentionBwdConfig(
    block_m1=None, block_n1=None, block_n2=None, num_warps=None, num_stages=None
)


def prepare(
    q: torch.Tensor,
    k: torch.Tensor,
    v: torch.Tensor,
    o: torch.Tensor,
    do: torch.Tensor,
    m: torch.Tensor,
) -> Callable[[], tuple[torch.Tensor, torch.Tensor, torch.Tensor]]:
    """The scaled k, delta, dq and the per-query-head dk and dv, outside the timed call."""
    return _prepare(CONFIG, q, k, v, o, do, m)


def attention_bwd(
    q: torch.Tensor,
    k: torch.Tensor,
    v: torch.Tensor,
    o: torch.Tensor,
    do: torch.Tensor,
    m: torch.Tensor,
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    return prepare(q, k, v, o, do, m)()
