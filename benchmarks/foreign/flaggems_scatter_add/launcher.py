"""FlagGems' scatter_add_ along the last dimension (src/flag_gems/ops/scatter_add_.py,
v5.0.2: `scatter_add_kernel_1`), launched as FlagGems' `scatter_add_` launches it so that
its launch choices are knobs.

FlagGems takes this flat kernel when the index covers the whole last dimension (here one
dimension: every routed token-expert pair adds into one of `experts` totals).  Each program
owns LOOP consecutive blocks of BLOCK_SIZE elements (the loop unrolled by
`tl.static_range`): it loads the elements' fp32 weights and int64 expert ids and adds each
weight into its expert's total with a relaxed `tl.atomic_add`.  With 256 experts and
thousands of pairs every total takes many contending atomics.

FlagGems' launch: BLOCK_SIZE = 256, LOOP = 1, Triton's default warps (4) and stages, one
program per 256 elements, no autotuning.  Knobs: the block and the warps, None keeping that
choice.  LOOP stays 1: the kernel computes its bounds mask once, from its first block, so a
program's later blocks would read and add past the end whenever the length is not a
multiple of BLOCK_SIZE x LOOP.  scatter_add_ adds into the tensor it is given, so the
caller zeroes the totals first; the timed call is that zeroing (torch's `zero_`) and the
kernel.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import torch
import triton

from foreign import _common

LAST_INFO: dict[str, Any] = {}
BLOCK_SIZE, LOOP = 256, 1  # scatter_add_1's constants (LOOP is no knob: see above)


@dataclass(frozen=True)
class ScatterAddConfig:
    block_size: int | None = None  # None: FlagGems' 256 elements per block
    num_warps: int | None = None  # None: Triton's default (FlagGems passes none)


def prepare(
    cfg: ScatterAddConfig, expert_ids: torch.Tensor, weights: torch.Tensor, experts: int
) -> Callable[[], Any]:
    mod = _common.load_source("flaggems_scatter_add")
    if expert_ids.shape != weights.shape or expert_ids.dim() != 1:
        raise ValueError("expert_ids and weights must be 1-D tensors of one length")
    if weights.dtype != torch.float32:
        raise ValueError("weights must be fp32 (FlagGems upcasts 16-bit totals to fp32)")
    n = expert_ids.numel()
    block = cfg.block_size or BLOCK_SIZE
    grid = (triton.cdiv(n, block * LOOP),)
    extra = {"num_warps": cfg.num_warps} if cfg.num_warps else {}
    out = torch.zeros(experts, dtype=torch.float32, device=weights.device)

    def launch() -> torch.Tensor:
        out.zero_()
        # index_dim_n = n and inp_dim_n = experts: the offset is the expert id itself
        handle = mod.scatter_add_kernel_1[grid](
            n, experts, out, expert_ids, weights, n, BLOCK_SIZE=block, LOOP=LOOP, **extra
        )
        _common.record(
            LAST_INFO, handle, kernels=2, kernel_names=["zero_", "scatter_add_kernel_1"],
            block_size=block, num_warps=cfg.num_warps or 4, programs=grid[0],
        )  # fmt: skip
        return out

    return launch
