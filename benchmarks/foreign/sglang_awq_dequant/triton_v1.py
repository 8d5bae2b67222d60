"""SGLang's AWQ int4 dequantization with SGLang's own launch: 32 rows x 32 packed columns
(256 output columns) per program, the defaults of awq_dequantize_triton, Triton's default 4
warps (SGLang passes none; no heuristic, autotuner or tuned table); the output allocated
outside the timed call."""

from __future__ import annotations

from collections.abc import Callable

import torch

from foreign.sglang_awq_dequant.launcher import AwqDequantConfig
from foreign.sglang_awq_dequant.launcher import prepare as _prepare

CONFIG = AwqDequantConfig(block_x=None, block_y=None, num_warps=None)


def prepare(
    qweight: torch.Tensor, scales: torch.Tensor, qzeros: torch.Tensor
) -> Callable[[], torch.Tensor]:
    """The [k, n] output, outside the timed call."""
    return _prepare(CONFIG, qweight, scales, qzeros)


def awq_dequantize(
    qweight: torch.Tensor, scales: torch.Tensor, qzeros: torch.Tensor
) -> torch.Tensor:
    return prepare(qweight, scales, qzeros)()
