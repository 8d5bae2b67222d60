"""Qwen3-VL's bilinear position-embedding interpolation with vLLM's own launch: the next
power of two of the hidden size as the column tile (2048 for 1152, one masked step),
Triton's default 4 warps and 3 stages (vLLM passes none; no autotune); the output made
outside the timed call."""

from __future__ import annotations

from collections.abc import Callable

import torch

from foreign.vllm_qwen3vl_pos_embed.launcher import PosEmbedConfig
from foreign.vllm_qwen3vl_pos_embed.launcher import prepare as _prepare

CONFIG = PosEmbedConfig(block_d=None, num_warps=None, num_stages=None)


def prepare(
    embed: torch.Tensor, t: int, h: int, w: int, side: int, merge: int
) -> Callable[[], torch.Tensor]:
    """The output, outside the timed call."""
    return _prepare(CONFIG, embed, t, h, w, side, merge)


def pos_embed_interpolate(
    embed: torch.Tensor, t: int, h: int, w: int, side: int, merge: int
) -> torch.Tensor:
    return prepare(embed, t, h, w, side, merge)()
