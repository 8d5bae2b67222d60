"""FlagGems' fast Hadamard transform (src/flag_gems/ops/hadamard_transform.py, v5.0.2:
`_fht_kernel_2d` and its `_butterfly_stage_2d`), launched as FlagGems' `hadamard_transform`
launches it so that its launch choices are knobs.

One program per ROWS_PER_PROGRAM rows loads them whole ([rows, dim], converted to fp32)
and applies the log2(dim) butterfly stages in registers, largest stride first: each stage
reshapes the rows into [groups, 2, stride], swaps the last two axes, splits the pairs, and
joins their sums and differences back (layout shuffles the compiler may route through
shared memory).  Then it scales and stores in the input dtype, evicting first.

FlagGems' launch: no autotuning.  Its dispatcher sends fp16 and bf16 rows of 1024 columns
or fewer to four native-dtype kernels and fp32 rows of 512 or fewer to a 1-D kernel; every
other power-of-two width takes this kernel, with rows per program and warps from a table of
the width (64 rows and 1 warp up to 64 columns, 32 / 1 at 128, 16 / 1 at 256, 2 / 4 up to
1024, 1 / 4 up to 4096, 1 / 8 above) and 1 stage.  Here this kernel is launched at every
width with that table, and only power-of-two widths are taken (FlagGems pads others with
zeros first).  FlagGems allocates the output per call; here it is made in `prepare`.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import torch
import triton

from foreign import _common

LAST_INFO: dict[str, Any] = {}
FLAGGEMS_STAGES = 1  # FlagGems passes num_stages=1 (the kernel has no loop)


def flaggems_table(dim: int) -> tuple[int, int]:
    """FlagGems' (rows per program, warps) for its 2-D fp32 butterfly kernel."""
    if dim <= 64:
        return 64, 1
    if dim <= 128:
        return 32, 1
    if dim <= 256:
        return 16, 1
    if dim <= 1024:
        return 2, 4
    if dim <= 4096:
        return 1, 4
    return 1, 8


@dataclass(frozen=True)
class HadamardConfig:
    rows_per_program: int | None = None  # None: FlagGems' table (1 row above 1024 columns)
    num_warps: int | None = None  # None: FlagGems' table (8 warps above 4096 columns)


def prepare(cfg: HadamardConfig, x: torch.Tensor, scale: float) -> Callable[[], Any]:
    mod = _common.load_source("flaggems_hadamard")
    if x.dim() != 2 or x.stride(-1) != 1:
        raise ValueError("x must be a [tokens, dim] tensor with unit column stride")
    tokens, dim = x.shape
    if dim < 2 or dim & (dim - 1):
        raise ValueError("dim must be a power of two (FlagGems pads other widths first)")
    fg_rows, fg_warps = flaggems_table(dim)
    rows = cfg.rows_per_program or fg_rows
    warps = cfg.num_warps or fg_warps
    out = torch.empty(tokens, dim, device=x.device, dtype=x.dtype)
    grid = (triton.cdiv(tokens, rows),)
    log_n = dim.bit_length() - 1

    def launch() -> torch.Tensor:
        with _common.interpreter_float_scalars():
            handle = mod._fht_kernel_2d[grid](
                x, out, scale, stride_x_row=x.stride(0), stride_out_row=dim, N_ROWS=tokens,
                DIM=dim, LOG_N=log_n, BLOCK_SIZE=dim, ROWS_PER_PROGRAM=rows,
                INPUT_IS_FP16=x.dtype == torch.float16, INPUT_IS_BF16=x.dtype == torch.bfloat16,
                num_warps=warps, num_stages=FLAGGEMS_STAGES,
            )  # fmt: skip
        _common.record(
            LAST_INFO, handle, kernels=1, kernel_names=["_fht_kernel_2d"],
            rows_per_program=rows, num_warps=warps, programs=grid[0],
        )  # fmt: skip
        return out

    return launch
