"""Liger-Kernel's total-variation-distance forward (liger_kernel.ops.tvd, 0.8.5), launched by
our copy of Liger's `tv_distance_forward_triton` so that its launch choices are knobs.

One program per token row loops over the vocabulary in BLOCK_SIZE-column steps; each step
loads both distributions, adds the step's sum of 0.5 * |p - q| to the row's fp32 total and
writes the gradient 0.5 * sign(p - q) / rows for those columns (the kernel writes the whole
[rows, vocab] gradient in the forward, so the backward is free).  The program then writes
its row's total / rows and Liger's wrapper sums the totals with torch: the timed call is the
kernel and that one sum.  Liger's choices: BLOCK_SIZE = min(16384, next_pow2(vocab)),
num_warps from the block (4, 8 from 2048 columns, 16 from 8192, 32 from 32768), `batchmean`
reduction, no labels.  Knobs: `block_size` (columns per step) and `num_warps`, None keeping
Liger's.

Liger allocates the row totals and the gradient on every call; here they are allocated in
`prepare` (set-up per batch, outside the timed call).  Nothing is written into the inputs.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import torch
import triton

from foreign import _common
from kbopt.bench.interpreter import fix_scalar_index_if_interpreting

LAST_INFO: dict[str, Any] = {}
IGNORE_INDEX = -100  # liger's default; unused without labels


@dataclass(frozen=True)
class LigerTvdConfig:
    block_size: int | None = None  # None: liger's min(16384, next_pow2(vocab))
    num_warps: int | None = None  # None: liger's get_num_warps(block)


def prepare(
    cfg: LigerTvdConfig, p: torch.Tensor, q: torch.Tensor
) -> Callable[[], tuple[torch.Tensor, torch.Tensor]]:
    fix_scalar_index_if_interpreting()
    from liger_kernel.ops import tvd as liger

    if p.shape != q.shape or p.dim() != 2:
        raise ValueError("both distributions must be [rows, vocab]")
    if not (p.is_contiguous() and q.is_contiguous()):
        raise ValueError("both distributions must be contiguous (liger makes them so per call)")
    rows, vocab = p.shape
    block = cfg.block_size or min(liger.MAX_FUSED_SIZE, triton.next_power_of_2(vocab))
    warps = cfg.num_warps or liger.get_num_warps(block)
    row_loss = torch.zeros(rows, dtype=torch.float32, device=p.device)
    grads = torch.empty_like(p)
    no_label = torch.empty(1, device=p.device)  # liger's placeholder when there are no labels
    batchmean = liger._REDUCTION_MODE_BATCHMEAN.value

    def launch() -> tuple[torch.Tensor, torch.Tensor]:
        with _common.interpreter_float_scalars():
            handle = liger._tv_distance_kernel[(rows,)](
                p, p.stride(0), q, q.stride(0), row_loss, row_loss.stride(0), grads,
                grads.stride(0), no_label, IGNORE_INDEX, vocab, 1.0 / rows, BLOCK_SIZE=block,
                HAS_LABEL=False, num_warps=warps, reduction=batchmean,
            )  # fmt: skip
        loss = row_loss.sum()
        _common.record(
            LAST_INFO, handle, kernels=2, kernel_names=["_tv_distance_kernel", "row_loss_sum"],
            block_size=block, num_warps=warps, programs=rows,
        )  # fmt: skip
        return loss, grads

    return launch
