"""Liger-Kernel's GEGLU forward (liger_kernel.ops.geglu, 0.8.5), launched by our copy of
Liger's `geglu_forward` so that its launch choice is a knob.

c = gelu_tanh(a) * b: the tanh GELU in fp32 (libdevice tanh), rounded to the input dtype,
times b.  Liger runs one program per row holding the whole row: BLOCK_SIZE =
next_pow2(hidden) (the row is padded up to it, masked) and num_warps from
`calculate_settings` (4, 8 from 2048 columns, 16 from 8192, 32 from 32768).  The knob is
`num_warps` (None: Liger's); the block must hold the row, so it is not a knob.  The output
is allocated in `prepare`.
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
class LigerGegluConfig:
    num_warps: int | None = None  # None: liger's calculate_settings


def prepare(cfg: LigerGegluConfig, a: torch.Tensor, b: torch.Tensor) -> Callable[[], torch.Tensor]:
    fix_scalar_index_if_interpreting()
    from liger_kernel.ops import geglu as liger
    from liger_kernel.ops.utils import calculate_settings

    shape = a.shape
    n_cols = shape[-1]
    a2, b2 = a.view(-1, n_cols), b.view(-1, n_cols)
    n_rows = a2.shape[0]
    c = torch.empty_like(a2)
    block, warps = calculate_settings(n_cols)
    warps = cfg.num_warps or warps

    def launch() -> torch.Tensor:
        with _common.interpreter_libdevice(liger, tanh=_libdevice_cpu.tanh):
            handle = liger._geglu_tanh_forward_kernel[(n_rows,)](
                a2, b2, c, c.stride(-2), n_cols=n_cols, BLOCK_SIZE=block, num_warps=warps
            )
        _common.record(
            LAST_INFO, handle, kernels=1, kernel_names=["_geglu_tanh_forward_kernel"],
            block_size=block, num_warps=warps,
        )  # fmt: skip
        return c.view(*shape)

    return launch
