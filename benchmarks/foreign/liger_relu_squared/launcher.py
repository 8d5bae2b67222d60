"""Liger-Kernel's squared-ReLU forward (liger_kernel.ops.relu_squared, 0.8.5), launched by
our copy of Liger's `relu_squared_forward` so that its launch choice is a knob.

One program per row holds the whole row (BLOCK_SIZE = next_pow2(width), masked; the width
is a compile-time constant, so each width compiles its own kernel): it loads x and writes
max(x, 0)^2 in the input dtype.  Liger's choices: BLOCK_SIZE and num_warps from
`calculate_settings` (4 warps, 8 from 2048 columns, 16 from 8192, 32 from 32768), Triton's
default stages.  The knob is `num_warps` (None: Liger's); the block must hold the row, so it
is not a knob.  The output is allocated in `prepare`.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import torch

from foreign import _common
from kbopt.bench.interpreter import fix_scalar_index_if_interpreting

LAST_INFO: dict[str, Any] = {}


@dataclass(frozen=True)
class LigerReluSquaredConfig:
    num_warps: int | None = None  # None: liger's calculate_settings


def prepare(cfg: LigerReluSquaredConfig, x: torch.Tensor) -> Callable[[], torch.Tensor]:
    fix_scalar_index_if_interpreting()
    from liger_kernel.ops import relu_squared as liger
    from liger_kernel.ops.utils import calculate_settings

    shape = x.shape
    x2 = x.reshape(-1, shape[-1])
    if x2.stride(-1) != 1:
        raise ValueError("x must be contiguous in its last dimension")
    n_rows, n_cols = x2.shape
    block, warps = calculate_settings(n_cols)
    warps = cfg.num_warps or warps
    y = torch.empty_like(x2)

    def launch() -> torch.Tensor:
        handle = liger._relu_squared_forward_kernel[(n_rows,)](
            y, y.stride(-2), x2, x2.stride(-2), n_cols=n_cols, BLOCK_SIZE=block, num_warps=warps
        )
        _common.record(
            LAST_INFO, handle, kernels=1, kernel_names=["_relu_squared_forward_kernel"],
            block_size=block, num_warps=warps, programs=n_rows,
        )  # fmt: skip
        return y.view(*shape)

    return launch
