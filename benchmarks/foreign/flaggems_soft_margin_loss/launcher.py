"""FlagGems' soft-margin loss with a mean reduction (src/flag_gems/ops/soft_margin_loss.py,
v5.0.2: `_soft_margin_loss_sum_kernel`), launched as FlagGems' `soft_margin_loss` launches
it so that its launch choices are knobs.

Each program takes BLOCK_SIZE consecutive elements of the flattened scores x and targets
y, computes log(1 + exp(-x y)) in fp32 (as max(-x y, 0) + log(1 + exp(-|x y|))), sums its
block with `tl.sum` and adds that sum into one fp32 scalar with `tl.atomic_add` (default
semantics, acq_rel): one atomic per program, all on the same address.

FlagGems' launch: BLOCK_SIZE = 1024, Triton's default warps (4) and stages, no autotuning;
the fp32 scalar is `torch.zeros` per call, and for the mean it is divided by the element
count and cast to the input dtype after the kernel.  Knobs: the block and the warps, None
keeping that choice.  Here the scalar is allocated in `prepare`, and the timed call is its
zero-fill (torch's `zero_`), the kernel, the division and the cast: four launches (three
in fp32, where the cast is none).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import torch
import triton

from foreign import _common

LAST_INFO: dict[str, Any] = {}
BLOCK_SIZE = 1024  # soft_margin_loss's fixed block


@dataclass(frozen=True)
class SoftMarginLossConfig:
    block_size: int | None = None  # None: FlagGems' 1024 elements per program
    num_warps: int | None = None  # None: Triton's default 4 (FlagGems passes none)


def prepare(
    cfg: SoftMarginLossConfig, scores: torch.Tensor, targets: torch.Tensor
) -> Callable[[], Any]:
    mod = _common.load_source("flaggems_soft_margin_loss")
    if not scores.is_contiguous() or not targets.is_contiguous():
        raise ValueError("scores and targets must be contiguous")
    if scores.numel() != targets.numel() or scores.numel() == 0:
        raise ValueError("scores and targets must have the same, non-zero, number of elements")
    n = scores.numel()
    block = cfg.block_size or BLOCK_SIZE
    warps = cfg.num_warps or 4
    grid = (triton.cdiv(n, block),)
    total = torch.empty((), dtype=torch.float32, device=scores.device)
    cast = scores.dtype != torch.float32

    def launch() -> torch.Tensor:
        total.zero_()
        handle = mod._soft_margin_loss_sum_kernel[grid](
            scores, targets, total, n, BLOCK_SIZE=block, num_warps=warps
        )
        _common.record(
            LAST_INFO, handle, kernels=4 if cast else 3,
            kernel_names=["zero_", "_soft_margin_loss_sum_kernel", "div"] + (["to"] if cast else []),
            block_size=block, num_warps=warps, programs=grid[0],
        )  # fmt: skip
        return (total / float(n)).to(dtype=scores.dtype)

    return launch
