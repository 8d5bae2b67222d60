"""Liger-Kernel's RMSNorm forward (liger_kernel.ops.rms_norm, 0.8.5), launched by our copy
of Liger's `rms_norm_forward` so that its launch choices are knobs.

Liger sizes BLOCK_SIZE = next_pow2(hidden) and num_warps from it (`calculate_settings`:
4, 8 from 2048 columns, 16 from 8192, 32 from 32768) and picks one of two kernels: one row
per program (`_rms_norm_forward_kernel`), or, for narrow rows (BLOCK_SIZE <= 256) over at
least 32768 rows, BLOCK_ROW=16 rows per program (`_block_rms_norm_forward_kernel`).  A knob
left at None keeps Liger's choice; `block_row=1` forces the row kernel, 2..16 the block
kernel with that many rows.  Llama casting (fp32 statistics), offset 0, with a weight; the
per-row fp32 rstd Liger keeps for its backward pass is written as in Liger.  Output and
rstd buffers are allocated in `prepare`.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

import torch
import triton
import triton.language as tl

from foreign import _common
from kbopt.bench.interpreter import fix_scalar_index_if_interpreting

LAST_INFO: dict[str, Any] = {}
LLAMA = 0  # liger's _CASTING_MODE_LLAMA


@triton.jit
def _rsqrt_for_interpreter(x):  # type: ignore[no-untyped-def]
    return 1.0 / tl.sqrt(x)


@contextlib.contextmanager
def _interpreter_rsqrt(liger: Any) -> Iterator[None]:
    """Triton 3.6's CPU interpreter has no libdevice rsqrt (it returns None); for CPU tests
    only, Liger's kernels see 1/sqrt for the launches inside the block."""
    if os.environ.get("TRITON_INTERPRET") != "1":
        yield
        return
    original = liger.rsqrt
    liger.rsqrt = _rsqrt_for_interpreter
    try:
        yield
    finally:
        liger.rsqrt = original


@dataclass(frozen=True)
class LigerRmsNormConfig:
    num_warps: int | None = None  # None: liger's calculate_settings
    block_row: int | None = None  # None: liger's choice (16 for narrow rows, else 1)


def prepare(
    cfg: LigerRmsNormConfig, x: torch.Tensor, w: torch.Tensor, eps: float
) -> Callable[[], torch.Tensor]:
    fix_scalar_index_if_interpreting()
    from liger_kernel.ops import rms_norm as liger
    from liger_kernel.ops.utils import calculate_settings

    shape = x.shape
    x2 = x.view(-1, shape[-1])
    n_rows, n_cols = x2.shape
    block, warps = calculate_settings(n_cols)
    warps = cfg.num_warps or warps
    block_row = cfg.block_row
    if block_row is None:
        block_row = 1 if (block > 256 or n_rows < 4096 * 8) else 16
    y = torch.empty((n_rows, n_cols), dtype=x.dtype, device=x.device)
    rstd = torch.empty(n_rows, dtype=torch.float32, device=x.device)
    common = (y, y.stride(0), x2, x2.stride(0), w, w.stride(0), rstd, rstd.stride(0))

    def launch() -> torch.Tensor:
        with _common.interpreter_float_scalars(), _interpreter_rsqrt(liger):
            if block_row == 1:
                handle = liger._rms_norm_forward_kernel[(n_rows,)](
                    *common, n_cols, eps, 0.0, LLAMA,
                    elementwise_affine=True, BLOCK_SIZE=block, num_warps=warps,
                )  # fmt: skip
                name = "_rms_norm_forward_kernel"
            else:
                handle = liger._block_rms_norm_forward_kernel[(triton.cdiv(n_rows, block_row),)](
                    *common, n_rows, n_cols, eps, 0.0, LLAMA,
                    elementwise_affine=True, BLOCK_SIZE=block, BLOCK_ROW=block_row,
                    num_warps=warps,
                )  # fmt: skip
                name = "_block_rms_norm_forward_kernel"
        LAST_INFO.clear()
        LAST_INFO.update(kernels=1, kernel_names=[name], block_row=block_row, num_warps=warps)
        for key in ("n_regs", "n_spills"):
            if isinstance(getattr(handle, key, None), int):
                LAST_INFO[key] = getattr(handle, key)
        return y.view(*shape)

    return launch
