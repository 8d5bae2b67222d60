"""vLLM's multi-LoRA expand with vLLM's own launch on Hopper: its default configuration
(64-token by 64-column tiles with several slices, 128 columns with one, 32-deep rank steps,
4 warps), 1 stage (vLLM's SM90 setting whenever the fp32 buffer is cast to 16-bit weights),
added in place into the base output; the adapter grouping and the slices' pointer and
stride tables made outside the timed call."""

from __future__ import annotations

from collections.abc import Callable

import torch

from foreign.vllm_lora_expand.launcher import LoraExpandConfig
from foreign.vllm_lora_expand.launcher import prepare as _prepare

CONFIG = LoraExpandConfig(block_m=None, block_n=None, block_k=None, num_warps=None, num_stages=None)


def prepare(
    x: torch.Tensor, lora_b: torch.Tensor, base: torch.Tensor, mapping: torch.Tensor,
    first_out: int, other_out: int,
) -> Callable[[], torch.Tensor]:  # fmt: skip
    """The tokens grouped by adapter and the slices' pointer and stride tables, outside the
    timed call."""
    return _prepare(CONFIG, x, lora_b, base, mapping, first_out, other_out)


def lora_expand(
    x: torch.Tensor, lora_b: torch.Tensor, base: torch.Tensor, mapping: torch.Tensor,
    first_out: int, other_out: int,
) -> torch.Tensor:  # fmt: skip
    return prepare(x, lora_b, base, mapping, first_out, other_out)()
