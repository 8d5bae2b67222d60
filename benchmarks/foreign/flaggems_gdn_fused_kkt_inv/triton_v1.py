"""FlagGems' fused gated-delta-rule chunk prologue with the middle of its @libtuner grid: BK
64, 4 warps, 3 stages, tensor descriptors on Hopper."""

from __future__ import annotations

from collections.abc import Callable

import torch

from foreign.flaggems_gdn_fused_kkt_inv.launcher import FusedKKTInvConfig
from foreign.flaggems_gdn_fused_kkt_inv.launcher import prepare as _prepare

CONFIG = FusedKKTInvConfig(bk=None, num_warps=None, num_stages=None, use_tma=None)


def prepare(
    g: torch.Tensor, k: torch.Tensor, beta: torch.Tensor
) -> Callable[[], tuple[torch.Tensor, torch.Tensor]]:
    """The scratch A, the zeroed A_inv and g_out, outside the timed call."""
    return _prepare(CONFIG, g, k, beta)


def fused_kkt_inv(
    g: torch.Tensor, k: torch.Tensor, beta: torch.Tensor
) -> tuple[torch.Tensor, torch.Tensor]:
    return prepare(g, k, beta)()
