"""FlagGems' Kronecker product of two matrices (src/flag_gems/ops/kron.py, v5.0.2:
`kron_kernel_for_batch_size_1`), launched as FlagGems' `kron` launches it for two 2-D
tensors, so that its launch choices are knobs.

The output [M, N] = [m1 * m2, n1 * n2] is cut into BLOCK_M x BLOCK_N tiles, one program
each (a 1-D grid, tiles row-major).  Every element of a tile decodes its row and column
into a's element (row // m2, column // n2) and b's (row % m2, column % n2), gathers both,
multiplies and stores the product: a's few values and b are re-read by every tile from the
cache, the output written once.

FlagGems' launch: `@triton.autotune` over the tuning YAML's `kron` entry (the generic nvidia
file; Hopper's has none), generated from block_m (1, 2, 4, 8), block_n (1024, 2048) and
warps (4, 8, 16) with the loader's default 2 stages, keyed on M and N.  Knobs: the row tile,
the column tile and the warps, None keeping the YAML's first value of each (1, 1024, 4);
the kernel has no loop, so the stages are no knob.  FlagGems allocates the output per call;
here it is made in `prepare`.
"""

from __future__ import annotations

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
class KronConfig:
    block_m: int | None = None  # None: the YAML's first block_m, 1 output row per tile
    block_n: int | None = None  # None: the YAML's first block_n, 1024 output columns
    num_warps: int | None = None  # None: the YAML's first warps, 4


def prepare(cfg: KronConfig, a: torch.Tensor, b: torch.Tensor) -> Callable[[], torch.Tensor]:
    mod = _common.load_source("flaggems_kron")
    if a.dim() != 2 or b.dim() != 2 or not (a.is_contiguous() and b.is_contiguous()):
        raise ValueError("a and b must be contiguous matrices")
    m1, n1 = a.shape
    m2, n2 = b.shape
    m, n = m1 * m2, n1 * n2
    block_m = cfg.block_m or YAML_FIRST["block_m"]
    block_n = cfg.block_n or YAML_FIRST["block_n"]
    warps = cfg.num_warps or YAML_FIRST["num_warps"]
    stages = YAML_FIRST["num_stages"]
    out = torch.empty(m, n, dtype=torch.promote_types(a.dtype, b.dtype), device=a.device)
    grid = (triton.cdiv(m, block_m) * triton.cdiv(n, block_n),)

    def launch() -> torch.Tensor:
        handle = mod.kron_kernel_for_batch_size_1[grid](
            a, b, out, 1, m, n, m1, m2, n1, n2, a.stride(0), a.stride(1), b.stride(0),
            b.stride(1), out.stride(0), out.stride(1), BLOCK_M=block_m, BLOCK_N=block_n,
            num_warps=warps, num_stages=stages,
        )  # fmt: skip
        _common.record(
            LAST_INFO, handle, kernels=1, kernel_names=["kron_kernel_for_batch_size_1"],
            block_m=block_m, block_n=block_n, num_warps=warps, num_stages=stages,
            programs=grid[0],
        )  # fmt: skip
        return out

    return launch
