"""FlagGems' grouped GEMM (src/flag_gems/ops/group_gemm.py, v5.0.2: `grouped_mm_tma_kernel`
with its `grouped_launch` swizzle), launched as FlagGems' `group_mm` (aten::_grouped_mm, a
2-D A times a 3-D B with group offsets) launches it on Hopper, so that its launch choices
are knobs.

A persistent grid of NUM_SMS programs (one per SM) walks one list of output tiles that
spans every group: for each group in turn (its rows a[offs[e-1]:offs[e]], its weight
b[e]), a program whose running tile index falls inside that group's ceil(rows / BLOCK_M) x
ceil(N / BLOCK_N) tiles takes every NUM_SMS-th of them, maps each through the GROUP_M
swizzle, walks K in BLOCK_K steps loading a [BLOCK_M, BLOCK_K] tile of A and a [BLOCK_K,
BLOCK_N] tile of B through TMA tensor descriptors (rows past the group read the next
group's rows, zero past the end, never stored), one tl.dot into fp32 (allow_tf32=False)
per step, and stores the tile in A's dtype: whole tiles through C's descriptor, a group's
last partial row tile through a masked pointer store.  An empty group has no tiles.

FlagGems' launch: `@libtuner` (its autotuner) over seven configurations in the file (128
to 256 x 64 to 256 tiles, 32 to 128-deep steps, GROUP_M 4 or 8, 4 or 8 warps, 2 to 4
stages), keyed on M, N and K, a pre-hook writing the block shapes into the host
descriptors; `triton_v1` takes the first (128 x 256, 64-deep, GROUP_M 8, 8 warps, 3
stages), as the other FlagGems specs take their lists' first.  Upstream uses this kernel
where the host TensorDescriptor exists and the GPU is sm90 or newer, otherwise a
block-pointer twin (not fetched).  Knobs: `block_m`, `block_n`, `block_k`, `group_m`,
`num_warps`, `num_stages`, and `programs` (the persistent grid, FlagGems' NUM_SMS), None
keeping FlagGems'.  The descriptors are built with the chosen block shapes, as
the pre-hook sets them.  FlagGems allocates the output and builds the descriptors per
call; here both are made in `prepare`.  Under the CPU interpreter (no SM count) NUM_SMS
is taken as 4, so that programs share the tile list there too.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import torch
from triton.tools.tensor_descriptor import TensorDescriptor

from foreign import _common

LAST_INFO: dict[str, Any] = {}
# group_gemm.py's get_autotune_config()[0], one program per SM (NUM_SMS)
FLAGGEMS_FIRST = {
    "block_m": 128,
    "block_n": 256,
    "block_k": 64,
    "group_m": 8,
    "num_warps": 8,
    "num_stages": 3,
}
INTERPRETER_SMS = 4  # the CPU interpreter has no SM count


@dataclass(frozen=True)
class GroupedMmConfig:
    block_m: int | None = None  # None: FlagGems' first, 128 (rows of an output tile)
    block_n: int | None = None  # None: FlagGems' first, 256 (columns of an output tile)
    block_k: int | None = None  # None: FlagGems' first, 64 (the reduction step)
    group_m: int | None = None  # None: FlagGems' first, 8 (row tiles per swizzle group)
    num_warps: int | None = None  # None: FlagGems' first, 8
    num_stages: int | None = None  # None: FlagGems' first, 3
    programs: int | None = None  # None: FlagGems' NUM_SMS, the GPU's SM count


def _pick(cfg: GroupedMmConfig, name: str) -> int:
    value = getattr(cfg, name)
    return int(value) if value is not None else FLAGGEMS_FIRST[name]


def _sm_count(device: torch.device) -> int:
    if device.type == "cuda":
        return int(torch.cuda.get_device_properties(device).multi_processor_count)
    return INTERPRETER_SMS


def prepare(
    cfg: GroupedMmConfig, a: torch.Tensor, b: torch.Tensor, offs: torch.Tensor
) -> Callable[[], torch.Tensor]:
    mod = _common.load_source("flaggems_grouped_mm")
    if a.dim() != 2 or b.dim() != 3 or offs.dim() != 1:
        raise ValueError("a [m, k], b [g, k, n], offs [g] (FlagGems' group_mm)")
    m, k = a.shape
    num_groups, bk, n = b.shape
    if bk != k or offs.numel() != num_groups:
        raise ValueError("b's k must be a's, offs one end per group")
    bm, bn, bkk = (_pick(cfg, x) for x in ("block_m", "block_n", "block_k"))
    group_m, warps, stages = (_pick(cfg, x) for x in ("group_m", "num_warps", "num_stages"))
    programs = int(cfg.programs) if cfg.programs is not None else _sm_count(a.device)
    c = a.new_empty(m, n)
    # as group_mm builds them, with the block shapes its pre-hook writes
    a_desc = TensorDescriptor(a, list(a.shape), list(a.stride()), [bm, bkk])
    b_desc = TensorDescriptor(b, [num_groups * k, n], [b.stride(1), b.stride(2)], [bkk, bn])
    c_desc = TensorDescriptor(c, list(c.shape), list(c.stride()), [bm, bn])
    grid = (programs,)

    def launch() -> torch.Tensor:
        handle = mod.grouped_mm_tma_kernel[grid](
            a_desc, b_desc, c_desc, c, offs, num_groups, m, n, k, c.stride(0), c.stride(1),
            BLOCK_M=bm, BLOCK_N=bn, BLOCK_K=bkk, GROUP_M=group_m,
            num_warps=warps, num_stages=stages,
        )  # fmt: skip
        _common.record(
            LAST_INFO, handle, kernels=1, kernel_names=["grouped_mm_tma_kernel"],
            block_m=bm, block_n=bn, block_k=bkk, group_m=group_m, num_warps=warps,
            num_stages=stages, programs=programs,
        )  # fmt: skip
        return c

    return launch
