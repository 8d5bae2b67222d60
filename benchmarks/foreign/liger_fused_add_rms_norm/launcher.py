"""Liger-Kernel's fused residual-add RMSNorm forward (liger_kernel.ops.fused_add_rms_norm,
0.8.5), launched by our copy of Liger's `fused_add_rms_norm_forward` so that its launch
choice is a knob.

One program per row holds the whole row (BLOCK_SIZE = next_pow2(hidden), masked): it loads
x and the residual, stores their sum s (the new residual stream), takes the fp32 mean
square of s, stores the row's rstd (fp32, kept for the backward pass) and writes
y = (s * rstd) * w (Llama casting: statistics in fp32, the product in the input dtype).
Liger's choices: num_warps from `calculate_settings` (4, 8 from 2048 columns, 16 from 8192,
32 from 32768), num_stages 2, offset 0.  The knob is `num_warps` (None: Liger's); the block
must hold the row, so it is not a knob, and nothing in the loop-free kernel is pipelined,
so num_stages stays Liger's 2.  Outputs and the rstd buffer are allocated in `prepare`.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import torch

from foreign import _common, _libdevice_cpu
from kbopt.bench.interpreter import fix_scalar_index_if_interpreting

LAST_INFO: dict[str, Any] = {}
LLAMA = 0  # liger's _CASTING_MODE_LLAMA
LIGER_STAGES = 2


@dataclass(frozen=True)
class LigerFusedAddRmsNormConfig:
    num_warps: int | None = None  # None: liger's calculate_settings


def prepare(
    cfg: LigerFusedAddRmsNormConfig,
    x: torch.Tensor,
    residual: torch.Tensor,
    w: torch.Tensor,
    eps: float,
) -> Callable[[], tuple[torch.Tensor, torch.Tensor]]:
    fix_scalar_index_if_interpreting()
    from liger_kernel.ops import fused_add_rms_norm as liger
    from liger_kernel.ops.utils import calculate_settings

    shape = x.shape
    x2, r2 = x.view(-1, shape[-1]), residual.view(-1, shape[-1])
    n_rows, n_cols = x2.shape
    block, warps = calculate_settings(n_cols)
    warps = cfg.num_warps or warps
    y = torch.empty_like(x2)
    s = torch.empty_like(x2)
    rstd = torch.empty(n_rows, dtype=torch.float32, device=x.device)

    def launch() -> tuple[torch.Tensor, torch.Tensor]:
        with (
            _common.interpreter_float_scalars(),
            _common.interpreter_libdevice(liger, rsqrt=_libdevice_cpu.rsqrt),
        ):
            handle = liger._fused_add_rms_norm_forward_kernel[(n_rows,)](
                y, y.stride(0), s, s.stride(0), x2, x2.stride(0), r2, r2.stride(0),
                w, w.stride(0), rstd, rstd.stride(0), n_cols, eps, 0.0, LLAMA,
                BLOCK_SIZE=block, num_warps=warps, num_stages=LIGER_STAGES,
            )  # fmt: skip
        _common.record(
            LAST_INFO, handle, kernels=1, kernel_names=["_fused_add_rms_norm_forward_kernel"],
            block_size=block, num_warps=warps,
        )  # fmt: skip
        return y.view(*shape), s.view(*shape)

    return launch
