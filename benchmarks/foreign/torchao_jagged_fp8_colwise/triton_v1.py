"""torchao's dual jagged column-wise fp8 quantization with torchao's own launch: the first
of the 36 configurations its autotuner times (32 columns a program, 64-row steps, 4 warps,
2 stages; the decorator dropped), e4m3 outputs with scales rounded down to powers of two
as `_Float8GroupedMM`'s backward asks; the four outputs made outside the timed call."""

from __future__ import annotations

from collections.abc import Callable

import torch

from foreign.torchao_jagged_fp8_colwise.launcher import JaggedColwiseConfig
from foreign.torchao_jagged_fp8_colwise.launcher import prepare as _prepare

CONFIG = JaggedColwiseConfig(block_size=None, block_size_iter=None, num_warps=None, num_stages=None)


def prepare(
    grad_output: torch.Tensor, a: torch.Tensor, offsets: torch.Tensor
) -> Callable[[], tuple[torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor]]:
    """The column-major e4m3 outputs and the scales, outside the timed call."""
    return _prepare(CONFIG, grad_output, a, offsets)


def jagged_fp8_colwise_dual(
    grad_output: torch.Tensor, a: torch.Tensor, offsets: torch.Tensor
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor]:
    return prepare(grad_output, a, offsets)()
