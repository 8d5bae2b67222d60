"""SGLang's segmented linear attention decode with SGLang's own choices (seg_la_fwd's decode
branch, no heuristic, autotuner or tuned table): 128-row K splits (one, no partial sum),
32-column V splits, 2 warps and 2 stages up to 128 rows, 64-column V splits, 2 warps and 3
stages above; the partial buffer made outside the timed call, the pool updated in place."""

from __future__ import annotations

from collections.abc import Callable

import torch

from foreign.sglang_seg_la_decode.launcher import SegLaDecodeConfig
from foreign.sglang_seg_la_decode.launcher import prepare as _prepare

CONFIG = SegLaDecodeConfig(k_split=None, v_split=None, num_warps=None)


def prepare(
    q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, state: torch.Tensor,
    slopes: torch.Tensor, slots: torch.Tensor,
) -> Callable[[], tuple[torch.Tensor, torch.Tensor]]:  # fmt: skip
    """The partial buffer, outside the timed call."""
    return _prepare(CONFIG, q, k, v, state, slopes, slots)


def seg_la_decode(
    q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, state: torch.Tensor,
    slopes: torch.Tensor, slots: torch.Tensor,
) -> tuple[torch.Tensor, torch.Tensor]:  # fmt: skip
    return prepare(q, k, v, state, slopes, slots)()
