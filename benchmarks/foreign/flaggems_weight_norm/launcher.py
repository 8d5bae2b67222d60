"""FlagGems' weight norm over dim 0 (src/flag_gems/ops/weightnorm.py, v5.0.2:
`weight_norm_kernel_first`), launched as FlagGems' `weight_norm_interface` launches it for
dim 0, so that its launch choices are knobs.

v is viewed as M = size(0) rows of N = the product of the other sizes (contiguous).  One
program per BLOCK_ROW_SIZE rows: it walks the rows in BLOCK_COL_SIZE-column steps, adding
the squares of the loaded fp32 values into a BLOCK_ROW_SIZE x BLOCK_COL_SIZE accumulator,
sums it per row and takes sqrt(sum + eps) (eps fp32's smallest normal), stores that norm,
then walks the rows again, storing v / norm * g in v's dtype.  v is read twice per program
(the second read from L2 when a program's rows fit there).

FlagGems' launch: `@triton.autotune` over the tuning YAML's `weight_norm_kernel_first` entry
(the generic nvidia file; Hopper's has none), generated from block_m (1, 2, 4, 8, 32: the
rows, BLOCK_ROW_SIZE), block_n (512, 1024, 2048: the columns, BLOCK_COL_SIZE) and warps
(4, 8, 16) with the loader's default 2 stages, keyed on M and N.  Knobs: the rows per
program, the columns per step, the warps and the stages, None keeping the YAML's first value
of each (1, 512, 4, 2).  FlagGems allocates the outputs per call (and makes v and g
contiguous, a no-op here); here they are made in `prepare`.

Under the CPU interpreter only, the kernel is imported from a rewritten copy of the fetched
file in which `a and b` reads `a & b`: the kernel combines its column and row masks with
`and`, which compiled Triton applies element-wise, while Triton 3.6's interpreter takes the
column mask's truth as a whole and returns the row mask alone whenever any column is in
range, so the last column step would read and write past each row's end.
"""

from __future__ import annotations

import math
import os
from collections.abc import Callable
from dataclasses import dataclass
from types import ModuleType
from typing import Any

import torch
import triton

from foreign import _common

LAST_INFO: dict[str, Any] = {}
# the tuning YAML's first value of each generated parameter, and the loader's default stages
YAML_FIRST = {"block_rows": 1, "block_cols": 512, "num_warps": 4, "num_stages": 2}
EPS = torch.finfo(torch.float32).tiny  # FlagGems' eps


@dataclass(frozen=True)
class WeightNormConfig:
    block_rows: int | None = None  # None: the YAML's first block_m, 1 row per program
    block_cols: int | None = None  # None: the YAML's first block_n, 512 columns per step
    num_warps: int | None = None  # None: the YAML's first warps, 4
    num_stages: int | None = None  # None: the config loader's default, 2


def _module() -> ModuleType:
    if os.environ.get("TRITON_INTERPRET") == "1":
        return _common.load_source_rewritten(
            "flaggems_weight_norm", _common.ElementwiseBoolOps(ops=("and",))
        )
    return _common.load_source("flaggems_weight_norm")


def prepare(
    cfg: WeightNormConfig, v: torch.Tensor, g: torch.Tensor
) -> Callable[[], tuple[torch.Tensor, torch.Tensor]]:
    mod = _module()
    if not v.is_contiguous() or not g.is_contiguous() or g.numel() != v.shape[0]:
        raise ValueError("v must be contiguous and g hold one magnitude per row of v")
    m = v.shape[0]
    n = math.prod(v.shape[1:])
    block_rows = cfg.block_rows or YAML_FIRST["block_rows"]
    block_cols = cfg.block_cols or YAML_FIRST["block_cols"]
    warps = cfg.num_warps or YAML_FIRST["num_warps"]
    stages = cfg.num_stages or YAML_FIRST["num_stages"]
    grid = (triton.cdiv(m, block_rows),)
    out = torch.empty_like(v)
    norm = torch.empty_like(g)

    def launch() -> tuple[torch.Tensor, torch.Tensor]:
        # compiled Triton passes eps as an fp32 scalar; so does the interpreter here
        with _common.interpreter_float_scalars():
            handle = mod.weight_norm_kernel_first[grid](
                out, norm, v, g, m, n, EPS, BLOCK_ROW_SIZE=block_rows,
                BLOCK_COL_SIZE=block_cols, num_warps=warps, num_stages=stages,
            )  # fmt: skip
        _common.record(
            LAST_INFO, handle, kernels=1, kernel_names=["weight_norm_kernel_first"],
            block_rows=block_rows, block_cols=block_cols, num_warps=warps,
            num_stages=stages, programs=grid[0],
        )  # fmt: skip
        return out, norm

    return launch
