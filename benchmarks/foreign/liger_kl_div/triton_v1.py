"""Liger-Kernel's KL-divergence forward (row totals, then torch's batch mean) with Liger's
own launch: 16384-column steps and 16 warps at a 128k vocabulary, one program per row."""

from __future__ import annotations

from collections.abc import Callable

import torch

from foreign.liger_kl_div.launcher import LigerKlDivConfig
from foreign.liger_kl_div.launcher import prepare as _prepare

CONFIG = LigerKlDivConfig(block_size=None, num_warps=None)


def prepare(log_q: torch.Tensor, p: torch.Tensor) -> Callable[[], torch.Tensor]:
    """The per-row totals buffer, outside the timed call."""
    return _prepare(CONFIG, log_q, p)


def kl_div(log_q: torch.Tensor, p: torch.Tensor) -> torch.Tensor:
    return prepare(log_q, p)()
