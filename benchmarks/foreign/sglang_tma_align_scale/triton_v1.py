"""SGLang's TMA alignment of fp32 group scales with SGLang's own launch
(`tma_align_input_scale`'s, no heuristic, autotuner or tuned table): min(rows, 8192)
programs walking the rows grid-stride, each row's scales in one next_pow2(K / 128)-lane
block, Triton's default 4 warps, for the hidden scales and then the down projection's; the
column-major outputs made outside the timed call."""

from __future__ import annotations

from collections.abc import Callable

import torch

from foreign.sglang_tma_align_scale.launcher import Outputs, TmaAlignConfig
from foreign.sglang_tma_align_scale.launcher import prepare as _prepare

CONFIG = TmaAlignConfig(h_programs=None, h_warps=None, d_programs=None, d_warps=None)


def prepare(hidden_scale: torch.Tensor, down_scale: torch.Tensor) -> Callable[[], Outputs]:
    """The padded column-major outputs, outside the timed call."""
    return _prepare(CONFIG, hidden_scale, down_scale)


def tma_align_scales(hidden_scale: torch.Tensor, down_scale: torch.Tensor) -> Outputs:
    return prepare(hidden_scale, down_scale)()
