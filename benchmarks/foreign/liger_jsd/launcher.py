"""Liger-Kernel's JSD forward (liger_kernel.ops.jsd, 0.8.5), launched by our copy of Liger's
Triton `jsd_loss_and_grad` so that its launch choices are knobs.

One program per token row loops over the vocabulary in BLOCK_SIZE-column steps; each step
loads the student's and the teacher's log-probabilities, computes the mixture's log
(log M, with exp of both and a log), and writes the step's per-element loss (fp32) into a
[rows, vocab] loss tile and the student's gradient (the input dtype).  Liger's wrapper then
sums the tile with torch and casts the sum to the input dtype: the timed call is the
kernel, that sum and that cast (three launches).  Liger's choices: BLOCK_SIZE =
min(4096, next_pow2(vocab)), no num_warps (Triton's default, 4), beta 0.5, no labels
(every row counts, so no host synchronisation).  Knobs: `block_size` (columns per step)
and `num_warps`, None keeping Liger's.

Liger clones the student's log-probabilities and has the kernel write the gradient over
the clone; here the kernel's separate gradient pointer gets a buffer made in `prepare`
(same bytes, the inputs stay intact for repeated calls), with the loss tile: set-up per
batch, outside the timed call.
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
LIGER_BLOCK_CAP = 4096  # liger's _JSD_TRITON_BLOCK_SIZE
TRITON_DEFAULT_WARPS = 4
BETA = 0.5
IGNORE_INDEX = -100


@dataclass(frozen=True)
class LigerJsdConfig:
    block_size: int | None = None  # None: liger's min(4096, next_pow2(vocab))
    num_warps: int | None = None  # None: Triton's default 4 (liger passes none)


def prepare(
    cfg: LigerJsdConfig, student: torch.Tensor, teacher: torch.Tensor
) -> Callable[[], tuple[torch.Tensor, torch.Tensor]]:
    fix_scalar_index_if_interpreting()
    from liger_kernel.ops import jsd as liger

    if student.shape != teacher.shape or student.dim() != 2:
        raise ValueError("student and teacher must both be [rows, vocab]")
    if student.stride(-1) != 1 or teacher.stride(-1) != 1:
        raise ValueError("student and teacher must be contiguous in their last dimension")
    rows, vocab = student.shape
    block = cfg.block_size or min(LIGER_BLOCK_CAP, triton.next_power_of_2(vocab))
    warps = cfg.num_warps or TRITON_DEFAULT_WARPS
    grad = torch.empty_like(student)
    tile = torch.zeros((rows, vocab), dtype=torch.float32, device=student.device)
    no_label = torch.empty(1, device=student.device)

    def launch() -> tuple[torch.Tensor, torch.Tensor]:
        with _common.interpreter_float_scalars():
            handle = liger._jsd_kernel[(rows,)](
                X_ptr=student, X_stride=student.stride(-2), Y_ptr=teacher,
                Y_stride=teacher.stride(-2), loss_ptr=tile, loss_stride=tile.stride(-2),
                dX_ptr=grad, dX_stride=grad.stride(-2), label_ptr=no_label, beta=BETA,
                n_non_ignore=rows, ignore_index=IGNORE_INDEX, n_cols=vocab,
                BLOCK_SIZE=block, HAS_LABEL=False, num_warps=warps,
            )  # fmt: skip
        loss = torch.sum(tile).to(student.dtype)
        _common.record(
            LAST_INFO, handle, kernels=3,
            kernel_names=["_jsd_kernel", "loss_tile_sum", "loss_cast"],
            block_size=block, num_warps=warps,
        )  # fmt: skip
        return loss, grad

    return launch
