"""FlagGems' var_mean over the last dimension (src/flag_gems/ops/var_mean.py, v5.0.2:
`var_mean_welford_kernel` with its `welford_func`), launched as FlagGems' `var_mean`
launches it so that its launch choices are knobs.

FlagGems takes this kernel whenever the reduced dimensions are not the whole tensor: they
are moved last (`dim_compress`, no copy for the last dimension), and each program takes
BLOCK_M rows.  Every lane of its BLOCK_M x BLOCK_N tile keeps its own running mean, count
and sum of squared deviations (Welford's update, in fp32) while the program walks the row
in BLOCK_N-column steps; `tl.reduce` with `welford_func` then merges the lanes of each row,
and the variance (divided by N - correction) and the mean are stored in the input dtype.

FlagGems' launch: `@triton.autotune` over the tuning YAML's `var_mean` entry (the generic
nvidia file; Hopper's has none), generated from block_m (1, 2, 4, 8), block_n (1024, 2048)
and warps (4, 8, 16) with the loader's default 2 stages, keyed on M and N.  Knobs: the row
tile, the column tile, the warps and the stages, None keeping the YAML's first value of
each (1, 1024, 4, 2).  The kernel combines its row and column masks with `and`, which
compiled Triton applies element-wise and Triton 3.6's CPU interpreter reads as a
whole-tensor truth, so under the interpreter only the launcher refuses a BLOCK_M that does
not divide the rows.  FlagGems allocates the outputs per call; here they are made in
`prepare`.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import torch
import triton

from foreign import _common

LAST_INFO: dict[str, Any] = {}
# the tuning YAML's first value of each generated parameter, and the loader's default stages
YAML_FIRST = {"block_m": 1, "block_n": 1024, "num_warps": 4, "num_stages": 2}


@dataclass(frozen=True)
class VarMeanConfig:
    block_m: int | None = None  # None: the YAML's first block_m, 1 row per program
    block_n: int | None = None  # None: the YAML's first block_n, 1024 columns per step
    num_warps: int | None = None  # None: the YAML's first warps, 4
    num_stages: int | None = None  # None: the config loader's default, 2


def prepare(cfg: VarMeanConfig, x: torch.Tensor, correction: int) -> Callable[[], Any]:
    mod = _common.load_source("flaggems_var_mean")
    if x.dim() != 2 or not x.is_contiguous():
        raise ValueError("x must be a contiguous [rows, hidden] tensor")
    rows, n = x.shape
    block_m = cfg.block_m or YAML_FIRST["block_m"]
    block_n = cfg.block_n or YAML_FIRST["block_n"]
    warps = cfg.num_warps or YAML_FIRST["num_warps"]
    stages = cfg.num_stages or YAML_FIRST["num_stages"]
    if os.environ.get("TRITON_INTERPRET") == "1" and rows % block_m:
        raise ValueError(
            f"under the CPU interpreter BLOCK_M ({block_m}) must divide the rows ({rows}): "
            "the kernel's `and` of its masks is read as a whole-tensor truth there"
        )
    grid = (triton.cdiv(rows, block_m),)
    var = torch.empty(rows, dtype=x.dtype, device=x.device)
    mean = torch.empty(rows, dtype=x.dtype, device=x.device)

    def launch() -> tuple[torch.Tensor, torch.Tensor]:
        handle = mod.var_mean_welford_kernel[grid](
            x, var, mean, rows, n, correction, BLOCK_M=block_m, BLOCK_N=block_n,
            num_warps=warps, num_stages=stages,
        )  # fmt: skip
        _common.record(
            LAST_INFO, handle, kernels=1, kernel_names=["var_mean_welford_kernel"],
            block_m=block_m, block_n=block_n, num_warps=warps, num_stages=stages,
            programs=grid[0],
        )  # fmt: skip
        return var, mean

    return launch
