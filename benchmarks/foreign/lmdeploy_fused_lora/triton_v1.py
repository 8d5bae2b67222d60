"""LMDeploy's fused LoRA with LMDeploy's own launch (`fused_lora`'s, for `TritonLoRAImpl`
on a contiguous base output): the first of its two autotune configurations, 32 tokens x
128 output columns x 128-deep hidden steps, 4 warps, 4 stages, BLOCK_SIZE_R = max(16,
rank); one program row per request, the first grid axis sized by the batch's whole token
count."""

from __future__ import annotations

from collections.abc import Callable

import torch

from foreign.lmdeploy_fused_lora.launcher import FusedLoraConfig
from foreign.lmdeploy_fused_lora.launcher import prepare as _prepare

CONFIG = FusedLoraConfig(block_m=None, block_n=None, block_k=None, num_warps=None, num_stages=None)


def prepare(*inputs: object) -> Callable[[], torch.Tensor]:
    """The request table, the output buffer and the grid, outside the timed call (the base
    output's copy into the buffer is inside it)."""
    return _prepare(CONFIG, *inputs)  # type: ignore[arg-type]


def fused_lora(*inputs: object) -> torch.Tensor:
    return prepare(*inputs)()
