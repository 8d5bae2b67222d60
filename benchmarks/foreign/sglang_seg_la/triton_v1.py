"""SGLang's segmented linear attention prefill with SGLang's own choices (seg_la_fwd's
prefill branch): 32-column K splits, 32-column V splits for at most 2 requests and 64 above,
32-token steps, 2 warps, 3 stages; the partial buffer and the output made outside the timed
call."""

from __future__ import annotations

from collections.abc import Callable

import torch

from foreign.sglang_seg_la.launcher import SegLaConfig
from foreign.sglang_seg_la.launcher import prepare as _prepare

CONFIG = SegLaConfig(k_split=None, v_split=None, block=None, num_warps=None, num_stages=None)


def prepare(
    q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, state: torch.Tensor,
    slopes: torch.Tensor, q_offsets: torch.Tensor, slots: torch.Tensor, has_state: torch.Tensor,
) -> Callable[[], tuple[torch.Tensor, torch.Tensor]]:  # fmt: skip
    """The partial buffer and the output, outside the timed call."""
    return _prepare(CONFIG, q, k, v, state, slopes, q_offsets, slots, has_state)


def seg_la(
    q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, state: torch.Tensor,
    slopes: torch.Tensor, q_offsets: torch.Tensor, slots: torch.Tensor, has_state: torch.Tensor,
) -> tuple[torch.Tensor, torch.Tensor]:  # fmt: skip
    return prepare(q, k, v, state, slopes, q_offsets, slots, has_state)()
