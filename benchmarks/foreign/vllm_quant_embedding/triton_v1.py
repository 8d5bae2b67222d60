"""vLLM's compressed-tensors quantized embedding lookup with vLLM's own launch: column blocks
of min(next_power_of_2(hidden), 1024) (fixed in `_dequant_gather_triton`) and Triton's
default 4 warps (vLLM passes none; no heuristic, autotuner or tuned table); the output
made outside the timed call."""

from __future__ import annotations

from collections.abc import Callable

import torch

from foreign.vllm_quant_embedding.launcher import DequantGatherConfig
from foreign.vllm_quant_embedding.launcher import prepare as _prepare

CONFIG = DequantGatherConfig(block=None, num_warps=None)


def prepare(
    ids: torch.Tensor, weight_packed: torch.Tensor, weight_scale: torch.Tensor, hidden: int,
    bits: int,
) -> Callable[[], torch.Tensor]:  # fmt: skip
    """The output, outside the timed call."""
    return _prepare(CONFIG, ids, weight_packed, weight_scale, hidden, bits)


def embed(
    ids: torch.Tensor, weight_packed: torch.Tensor, weight_scale: torch.Tensor, hidden: int,
    bits: int,
) -> torch.Tensor:  # fmt: skip
    return prepare(ids, weight_packed, weight_scale, hidden, bits)()
