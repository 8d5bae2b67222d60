"""Transformer Engine's fused grouped bias gradient (transformer_engine/common/triton/
grouped_dbias_dscales.py, v2.20.2: `_grouped_dbias_kernel`), launched as TE's
`compute_grouped_dbias_dscales` launches it from the backward of its grouped linear op, so
that its launch choices are knobs.

TE's `GroupedLinear` op with `scale_bias` (the FC2 of its fused grouped MLP, a MoE's routed
experts whose biases are scaled by each token's routing probability: out = x W_g^T + s_i
b_g) needs, in the backward, the bias gradient of every expert and the gradient of the
per-token scales: dbias[g, j] = sum over group g's rows i of dy[i, j] s_i, and
dscales[i] = sum over j of dy[i, j] b[g(i), j].  The routed rows of every expert are
contiguous, group g holding rows offsets[g] to offsets[g + 1] (int64, offsets[0] = 0).
The grid is (groups, N_ROW_SPLITS, cdiv(hidden, BLOCK_H)): each program reads its group's
bounds from the offsets (no host sync), splits the group's BLOCK_M-row tiles evenly across
the N_ROW_SPLITS programs of its column block and walks its share (a loop whose trip count
differs per group; tiles past the group's end are masked, so a short group's later splits
do only masked steps), loading the [BLOCK_M, BLOCK_H] dy tile in fp32 (rows past the group
and columns past hidden masked) and its rows' scales; it keeps the column sums of dy s in
an fp32 register vector (one atomic add into dbias at the end, N_ROW_SPLITS contributors
per element) and adds each tile's row sums of dy b (the bias row loaded once) into dscales
with an atomic add per tile (cdiv(hidden, BLOCK_H) contributors per element).  No tl.dot.

TE's launch (fixed in `_launch_grouped_dbias` for every shape): BLOCK_M 128, BLOCK_H 128,
N_ROW_SPLITS 4, 4 warps, 2 stages, HAS_SCALES on (the dscales fusion).  Knobs: the two
blocks (powers of two), the row splits, the warps and the stages, None keeping TE's.  TE
allocates dbias [groups, hidden] and dscales [rows] as fp32 zeros per call (the kernel only
adds into them); here they are allocated in `prepare` and their two zero fills are in the
timed call with the kernel.  TE refuses to run it when deterministic execution is
requested (NVTE_ALLOW_NONDETERMINISTIC_ALGO=0); that check is left out.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import torch
import triton

from foreign import _common

LAST_INFO: dict[str, Any] = {}
SOURCE = "te_grouped_dbias_dscales"
KERNEL = "_grouped_dbias_kernel"
# `_launch_grouped_dbias`'s constants, the same for every shape
TE_LAUNCH = {"BLOCK_M": 128, "BLOCK_H": 128, "N_ROW_SPLITS": 4, "num_warps": 4, "num_stages": 2}


@dataclass(frozen=True)
class GroupedDbiasConfig:
    block_m: int | None = None  # None: TE's 128 rows of a group a step
    block_h: int | None = None  # None: TE's 128 columns a program
    n_row_splits: int | None = None  # None: TE's 4 programs sharing a group's row tiles
    num_warps: int | None = None  # None: TE's 4
    num_stages: int | None = None  # None: TE's 2


def _power_of_two(v: int) -> bool:
    return v >= 1 and v & (v - 1) == 0


def prepare(
    cfg: GroupedDbiasConfig,
    dy: torch.Tensor,
    scales: torch.Tensor,
    bias: torch.Tensor,
    offsets: torch.Tensor,
) -> Callable[[], tuple[torch.Tensor, torch.Tensor]]:
    mod = _common.load_source(SOURCE)
    if dy.dim() != 2 or not dy.is_contiguous() or bias.dim() != 2 or not bias.is_contiguous():
        raise ValueError("dy [rows, hidden] and bias [groups, hidden] must be contiguous")
    rows, hidden = dy.shape
    groups = bias.shape[0]
    if bias.shape[1] != hidden or scales.shape != (rows,) or offsets.numel() != groups + 1:
        raise ValueError("bias must share hidden, scales be [rows], offsets [groups + 1]")
    if scales.dtype != torch.float32 or offsets.dtype != torch.int64:
        raise ValueError("scales must be fp32 and offsets int64, as TE passes them")
    bm = cfg.block_m or TE_LAUNCH["BLOCK_M"]
    bh = cfg.block_h or TE_LAUNCH["BLOCK_H"]
    splits = cfg.n_row_splits or TE_LAUNCH["N_ROW_SPLITS"]
    if not (_power_of_two(bm) and _power_of_two(bh)):
        raise ValueError("block_m and block_h must be powers of two")
    warps = cfg.num_warps or TE_LAUNCH["num_warps"]
    stages = cfg.num_stages or TE_LAUNCH["num_stages"]
    dbias = torch.empty(groups, hidden, dtype=torch.float32, device=dy.device)
    dscales = torch.empty(rows, dtype=torch.float32, device=dy.device)
    col_blocks = triton.cdiv(hidden, bh)
    grid = (groups, splits, col_blocks)
    sizes = torch.diff(offsets).tolist()
    tiles = [triton.cdiv(s, bm) for s in sizes]
    steps = [triton.cdiv(t, splits) for t in tiles]
    # a split's programs walk tiles_per_split steps; those past the group's tiles are masked
    live = sum(t - sp * st > 0 for t, st in zip(tiles, steps, strict=True) for sp in range(splits))

    def launch() -> tuple[torch.Tensor, torch.Tensor]:
        dbias.zero_()
        dscales.zero_()
        handle = mod._grouped_dbias_kernel[grid](
            dy, dbias, offsets, scales, bias, dscales, hidden,
            HAS_SCALES=True, N_ROW_SPLITS=splits, BLOCK_M=bm, BLOCK_H=bh,
            num_warps=warps, num_stages=stages,
        )  # fmt: skip
        _common.record(
            LAST_INFO, handle, kernels=3, kernel_names=["zero fill", "zero fill", KERNEL],
            block_m=bm, block_h=bh, n_row_splits=splits, num_warps=warps, num_stages=stages,
            programs=grid[0] * grid[1] * grid[2], column_blocks=col_blocks, groups=groups,
            longest_split_steps=max(steps, default=0), dbias_atomic_adds_per_output=splits,
            dscales_atomic_adds_per_output=col_blocks,
            metrics={
                "live_program_fraction": live / max(1, groups * splits),
                "num_splits": splits,
            },
        )  # fmt: skip
        return dbias, dscales

    return launch
