"""SGLang's segmented linear attention MTP verify with SGLang's own choices (seg_la_fwd's
branch for a batch of more than one token a request, with the intermediate-state cache):
32-column K splits, 32-column V splits for at most 2 requests and 64 above, 2 warps, 3
stages; the partial buffer and the output made outside the timed call."""

from __future__ import annotations

from collections.abc import Callable

import torch

from foreign.sglang_seg_la_mtp.launcher import SegLaMtpConfig
from foreign.sglang_seg_la_mtp.launcher import prepare as _prepare

CONFIG = SegLaMtpConfig(k_split=None, v_split=None, num_warps=None, num_stages=None)


def prepare(*inputs: torch.Tensor) -> Callable[[], tuple[torch.Tensor, torch.Tensor]]:
    """The partial buffer and the output, outside the timed call."""
    return _prepare(CONFIG, *inputs)


def seg_la_mtp(*inputs: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    return prepare(*inputs)()
