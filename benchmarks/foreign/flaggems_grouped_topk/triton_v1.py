"""FlagGems' group-limited top-k routing with FlagGems' own launch: tiles of the next powers
of two of the group's experts, the groups and the experts, and Triton's default 4 warps
for both launches (FlagGems passes none; no heuristic, autotuner or tuning YAML entry)."""

from __future__ import annotations

from collections.abc import Callable

import torch

from foreign.flaggems_grouped_topk.launcher import GroupedTopkConfig
from foreign.flaggems_grouped_topk.launcher import prepare as _prepare

CONFIG = GroupedTopkConfig(group_warps=None, select_warps=None)


def prepare(
    scores: torch.Tensor, bias: torch.Tensor, groups: int, topk_group: int, topk: int
) -> Callable[[], tuple[torch.Tensor, torch.Tensor]]:
    """The group scores and the outputs, outside the timed call."""
    return _prepare(CONFIG, scores, bias, groups, topk_group, topk)


def grouped_topk(
    scores: torch.Tensor, bias: torch.Tensor, groups: int, topk_group: int, topk: int
) -> tuple[torch.Tensor, torch.Tensor]:
    return prepare(scores, bias, groups, topk_group, topk)()
