"""Liger-Kernel's LayerNorm forward (liger_kernel.ops.layer_norm, 0.8.5), launched by our
copy of Liger's `layer_norm_forward` so that its launch choice is a knob.

One program per row holding the whole row (BLOCK_SIZE = next_pow2(hidden)): mean and
variance in fp32 over the row in registers, y = (x - mean) * rstd * w + b, and the per-row
fp32 mean and rstd Liger keeps for its backward pass.  num_warps comes from
`calculate_settings` (4, 8 from 2048 columns, 16 from 8192, 32 from 32768); it is the knob
(None: Liger's).  Output, mean and rstd buffers are allocated in `prepare`.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import torch

from foreign import _common, _libdevice_cpu
from kbopt.bench.interpreter import fix_scalar_index_if_interpreting

LAST_INFO: dict[str, Any] = {}


@dataclass(frozen=True)
class LigerLayerNormConfig:
    num_warps: int | None = None  # None: liger's calculate_settings


def prepare(
    cfg: LigerLayerNormConfig, x: torch.Tensor, w: torch.Tensor, b: torch.Tensor, eps: float
) -> Callable[[], torch.Tensor]:
    fix_scalar_index_if_interpreting()
    from liger_kernel.ops import layer_norm as liger
    from liger_kernel.ops.utils import calculate_settings

    shape = x.shape
    x2 = x.view(-1, shape[-1])
    n_rows, n_cols = x2.shape
    block, warps = calculate_settings(n_cols)
    warps = cfg.num_warps or warps
    y = torch.empty((n_rows, n_cols), dtype=x.dtype, device=x.device)
    mean = torch.empty(n_rows, dtype=torch.float32, device=x.device)
    rstd = torch.empty(n_rows, dtype=torch.float32, device=x.device)
    args = (
        y, y.stride(0), x2, x2.stride(0), w, w.stride(0), b, b.stride(0),
        mean, mean.stride(0), rstd, rstd.stride(0), n_cols, eps,
    )  # fmt: skip

    def launch() -> torch.Tensor:
        with (
            _common.interpreter_float_scalars(),
            _common.interpreter_libdevice(liger, rsqrt=_libdevice_cpu.rsqrt),
        ):
            handle = liger._layer_norm_forward_kernel[(n_rows,)](
                *args, BLOCK_SIZE=block, num_warps=warps
            )
        _common.record(
            LAST_INFO, handle, kernels=1, kernel_names=["_layer_norm_forward_kernel"],
            block_size=block, num_warps=warps,
        )  # fmt: skip
        return y.view(*shape)

    return launch
