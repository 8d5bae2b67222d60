"""FlagGems' matrix-vector product (src/flag_gems/ops/mv.py, v5.0.2: `mv_kernel`), launched
as FlagGems' `mv` (aten::mv) launches it, so that its launch choices are knobs.

The weight A is [N, M] (N output rows, M the reduction) and x has M elements.  One program
per BLOCK_N output rows: it walks the rows in BLOCK_M-column steps, loading a BLOCK_N x
BLOCK_M tile of A and BLOCK_M elements of x (masked at both edges), and adds their fp32
products into a BLOCK_N x BLOCK_M accumulator, summed over the columns at the end and
stored in the output's dtype.  No tensor cores: each weight element is read once and used
once.

FlagGems' launch: `@libtuner` (its autotuner) over the tuning YAML's `mv` entry (the
generic nvidia file; Hopper's has none), generated from block_m (32, 64, 128), block_n
(1, 2, 4, 8), warps (4, 8) and stages (3, 4), keyed on N and M rounded to 32.  Knobs: the
columns per step (block_m), the rows per program (block_n), the warps and the stages,
None keeping the YAML's first value of each (32, 1, 4, 3).  FlagGems allocates the output
per call; here it is made in `prepare`.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import torch
import triton

from foreign import _common

LAST_INFO: dict[str, Any] = {}
# the tuning YAML's first value of each generated parameter
YAML_FIRST = {"block_m": 32, "block_n": 1, "num_warps": 4, "num_stages": 3}


@dataclass(frozen=True)
class MvConfig:
    block_m: int | None = None  # None: the YAML's first block_m, 32 columns per step
    block_n: int | None = None  # None: the YAML's first block_n, 1 output row per program
    num_warps: int | None = None  # None: the YAML's first warps, 4
    num_stages: int | None = None  # None: the YAML's first stages, 3


def prepare(cfg: MvConfig, weight: torch.Tensor, x: torch.Tensor) -> Callable[[], torch.Tensor]:
    mod = _common.load_source("flaggems_mv")
    if weight.dim() != 2 or x.dim() != 1 or weight.shape[1] != x.shape[0]:
        raise ValueError("weight must be [N, M] and x [M]")
    n, m = weight.shape
    block_m = cfg.block_m or YAML_FIRST["block_m"]
    block_n = cfg.block_n or YAML_FIRST["block_n"]
    warps = cfg.num_warps or YAML_FIRST["num_warps"]
    stages = cfg.num_stages or YAML_FIRST["num_stages"]
    out = torch.empty((n,), dtype=weight.dtype, device=weight.device)
    grid = (triton.cdiv(n, block_n),)

    def launch() -> torch.Tensor:
        handle = mod.mv_kernel[grid](
            weight, x, out, n, m, weight.stride(0), weight.stride(1), x.stride(0),
            out.stride(0), BLOCK_N=block_n, BLOCK_M=block_m, num_warps=warps,
            num_stages=stages,
        )  # fmt: skip
        _common.record(
            LAST_INFO, handle, kernels=1, kernel_names=["mv_kernel"], block_m=block_m,
            block_n=block_n, num_warps=warps, num_stages=stages, programs=grid[0],
        )  # fmt: skip
        return out

    return launch
