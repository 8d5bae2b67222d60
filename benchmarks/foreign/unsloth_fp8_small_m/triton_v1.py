"""Unsloth's fused small-M block fp8 linear with Unsloth's own H100 launch
(`fp8_block_small_m_linear` through `_small_m_config` at 132 SMs): 16 rows, 64 columns and
one split of K, 3 stages, for Qwen3-32B-FP8's gate projection; 16 columns and two splits
summed by the last program to arrive, 5 stages, for Qwen3-8B-FP8's down projection; 4 warps
and 128-deep K steps at both.  The output and the split partials are allocated outside the
timed call; the arrival counters are zeroed inside it (when split_k > 1)."""

from __future__ import annotations

from collections.abc import Callable

import torch

from foreign.unsloth_fp8_small_m.launcher import Fp8SmallMConfig
from foreign.unsloth_fp8_small_m.launcher import prepare as _prepare

CONFIG = Fp8SmallMConfig(block_n=None, split_k=None, num_warps=None, num_stages=None)


def prepare(x: torch.Tensor, w: torch.Tensor, w_s: torch.Tensor) -> Callable[[], torch.Tensor]:
    """The [tokens, n] output and the fp32 split partials, outside the timed call."""
    return _prepare(CONFIG, x, w, w_s)


def fp8_small_m_linear(x: torch.Tensor, w: torch.Tensor, w_s: torch.Tensor) -> torch.Tensor:
    return prepare(x, w, w_s)()
