"""SGLang's gated delta rule recurrence with SGLang's own launch: one warp per program, a
K x 32 slice of the state per program, 3 stages, q and k L2-normalised in the kernel."""

from __future__ import annotations

from collections.abc import Callable

import torch

from foreign.sglang_gdn_recurrent.launcher import GdnRecurrentConfig
from foreign.sglang_gdn_recurrent.launcher import prepare as _prepare

CONFIG = GdnRecurrentConfig(block_v=None, num_warps=None, num_stages=None)


def prepare(
    q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, g: torch.Tensor, beta: torch.Tensor,
    h0: torch.Tensor,
) -> Callable[[], tuple[torch.Tensor, torch.Tensor]]:  # fmt: skip
    """The output and final-state buffers, outside the timed call."""
    return _prepare(CONFIG, q, k, v, g, beta, h0)


def gdn_recurrent(
    q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, g: torch.Tensor, beta: torch.Tensor,
    h0: torch.Tensor,
) -> tuple[torch.Tensor, torch.Tensor]:  # fmt: skip
    return prepare(q, k, v, g, beta, h0)()
