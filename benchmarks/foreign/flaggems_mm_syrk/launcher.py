"""FlagGems' A @ A^T (src/flag_gems/ops/mm.py, v5.0.2: `mm_kernel_syrk`), launched as
FlagGems' `mm` (aten::mm) launches it through `syrk_mm`, so that its launch choices are
knobs.

FlagGems' `mm(a, b)` takes this path when b is a's transpose as a view (same storage and
offset, the strides swapped), as `x @ x.mT` gives: the product is symmetric, so only its
lower triangle of BLOCK_M x BLOCK_M tiles is launched, T (T + 1) / 2 programs for T =
ceil(M / BLOCK_M) row tiles, packed in one grid axis; a program recovers its (row, column)
tile from its id with an fp32 square root and an integer correction, walks K in BLOCK_K
steps (loads masked along K only; rows past M wrap modulo M and are never stored), each
loading a [BLOCK_M, BLOCK_K] panel of A's rows and a [BLOCK_K, BLOCK_M] panel of the
other rows read transposed, one tl.dot into fp32 (allow_tf32=False), and stores the tile
in A's dtype, then, below the diagonal, its transpose at the mirrored position.

FlagGems' launch: `@libtuner` (its autotuner) over the tuning YAML's `mm_self_transpose`
entry (the generic nvidia file; Hopper's has none): 73 listed configurations of BLOCK_M
(32, 64, 128), BLOCK_K (32, 64, 128), 2 to 16 warps and 2 to 5 stages, keyed on M, K and
the strides rounded to 32.  `triton_v1` takes the first (32, 32, 2 warps, 2 stages), as the
other FlagGems specs take their lists' first.  Knobs: `block_m`, `block_k`, `num_warps`,
`num_stages`, None keeping that first configuration.  FlagGems allocates the output per
call; here it is made in `prepare`.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import torch
import triton

from foreign import _common

LAST_INFO: dict[str, Any] = {}
# the tuning YAML's first mm_self_transpose configuration
YAML_FIRST = {"block_m": 32, "block_k": 32, "num_warps": 2, "num_stages": 2}


@dataclass(frozen=True)
class MmSyrkConfig:
    block_m: int | None = None  # None: the YAML's first, 32 (rows and columns of a tile)
    block_k: int | None = None  # None: the YAML's first, 32 (the reduction step)
    num_warps: int | None = None  # None: the YAML's first, 2
    num_stages: int | None = None  # None: the YAML's first, 2


def _pick(cfg: MmSyrkConfig, name: str) -> int:
    value = getattr(cfg, name)
    return int(value) if value is not None else YAML_FIRST[name]


def prepare(cfg: MmSyrkConfig, a: torch.Tensor) -> Callable[[], torch.Tensor]:
    mod = _common.load_source("flaggems_mm_syrk")
    if a.dim() != 2:
        raise ValueError("a must be [M, K] (FlagGems' mm(a, a.mT))")
    m, k = a.shape
    block_m, block_k = _pick(cfg, "block_m"), _pick(cfg, "block_k")
    warps, stages = _pick(cfg, "num_warps"), _pick(cfg, "num_stages")
    c = torch.empty((m, m), device=a.device, dtype=a.dtype)
    tiles = triton.cdiv(m, block_m)
    grid = (tiles * (tiles + 1) // 2,)  # the packed lower triangle, as syrk_mm's grid

    def launch() -> torch.Tensor:
        handle = mod.mm_kernel_syrk[grid](
            a, c, m, k, a.stride(0), a.stride(1), c.stride(0), c.stride(1),
            BLOCK_M=block_m, BLOCK_K=block_k, num_warps=warps, num_stages=stages,
        )  # fmt: skip
        _common.record(
            LAST_INFO, handle, kernels=1, kernel_names=["mm_kernel_syrk"], block_m=block_m,
            block_k=block_k, num_warps=warps, num_stages=stages, programs=grid[0],
        )  # fmt: skip
        return c

    return launch
