"""SGLang's diffusion rotary with SGLang's own launch configs (`apply_rotary_embedding`,
interleaved as `_apply_rotary_emb` calls it for a GPT-J-style rope): its autotune configs
are 32 / 2, 64 / 4, 128 / 4 and 256 / 8 pair tile / warps, of which this keeps the one that
covers head_dim / 2 in one pass (64 pairs and 4 warps for a head of 128), Triton's default
3 stages; the output made outside the timed call."""

from __future__ import annotations

from collections.abc import Callable

import torch

from foreign.sglang_dit_rotary.launcher import DitRotaryConfig
from foreign.sglang_dit_rotary.launcher import prepare as _prepare

CONFIG = DitRotaryConfig(block_hs_half=None, num_warps=None, num_stages=None)


def prepare(x: torch.Tensor, cos: torch.Tensor, sin: torch.Tensor) -> Callable[[], torch.Tensor]:
    """The output buffer, outside the timed call."""
    return _prepare(CONFIG, x, cos, sin)


def rotary(x: torch.Tensor, cos: torch.Tensor, sin: torch.Tensor) -> torch.Tensor:
    return prepare(x, cos, sin)()
