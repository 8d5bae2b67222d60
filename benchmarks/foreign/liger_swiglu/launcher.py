"""Liger-Kernel's SwiGLU forward (liger_kernel.ops.swiglu, 0.8.5), launched by our copy of
Liger's `swiglu_forward` so that its launch choices are knobs.

c = silu(a) * b, silu in fp32 and the product in the input dtype.  Liger runs one program
per row holding the whole row (BLOCK_SIZE = next_pow2(hidden), warps from
`calculate_settings`), and on Blackwell, for rows of 16384 columns or more, a 2-D grid of
1024-column tiles (`_swiglu_forward_kernel_tiled`).  Knobs: `num_warps` (None: Liger's)
and `block_size` (None: Liger's whole-row kernel; a width: the tiled kernel with tiles of
that many columns, on any GPU).  The output is allocated in `prepare`.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import torch
import triton

from foreign import _common
from kbopt.bench.interpreter import fix_scalar_index_if_interpreting

LAST_INFO: dict[str, Any] = {}


@dataclass(frozen=True)
class LigerSwigluConfig:
    num_warps: int | None = None  # None: liger's calculate_settings
    block_size: int | None = None  # None: liger's whole-row kernel; else tiles of this width


def prepare(cfg: LigerSwigluConfig, a: torch.Tensor, b: torch.Tensor) -> Callable[[], torch.Tensor]:
    fix_scalar_index_if_interpreting()
    from liger_kernel.ops import swiglu as liger
    from liger_kernel.ops.utils import calculate_settings

    shape = a.shape
    n_cols = shape[-1]
    a2, b2 = a.view(-1, n_cols), b.view(-1, n_cols)
    n_rows = a2.shape[0]
    c = torch.empty_like(a2)
    if cfg.block_size is None:
        block, warps = calculate_settings(n_cols)
        kernel, grid, name = liger._swiglu_forward_kernel, (n_rows,), "_swiglu_forward_kernel"
    else:
        block, warps = cfg.block_size, 4  # liger's _swiglu_tile_settings uses 4 warps
        grid = (n_rows, triton.cdiv(n_cols, block))
        kernel, name = liger._swiglu_forward_kernel_tiled, "_swiglu_forward_kernel_tiled"
    warps = cfg.num_warps or warps

    def launch() -> torch.Tensor:
        with _common.interpreter_float_scalars():
            handle = kernel[grid](
                a2, b2, c, c.stride(-2), 1.0, n_cols, BLOCK_SIZE=block, num_warps=warps
            )
        LAST_INFO.clear()
        LAST_INFO.update(kernels=1, kernel_names=[name], block_size=block, num_warps=warps)
        for key in ("n_regs", "n_spills"):
            if isinstance(getattr(handle, key, None), int):
                LAST_INFO[key] = getattr(handle, key)
        return c.view(*shape)

    return launch
