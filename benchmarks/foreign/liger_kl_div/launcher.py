"""Liger-Kernel's KL-divergence forward (liger_kernel.ops.kl_div, 0.8.5), launched by our
copy of Liger's `kldiv_forward_triton` so that its launch choices are knobs.

One program per token row loops over the vocabulary in BLOCK_SIZE-column steps; each step
loads the student's log-probabilities and the teacher's probabilities, computes
p * (log(max(p, eps)) - log q) in fp32 and adds the step's sum to the row's total; the
program writes that one fp32 total.  Liger's wrapper then takes the batch mean with torch
(a sum and a division): the timed call is the kernel and those two launches.  Liger's
choices: BLOCK_SIZE = min(16384, next_pow2(vocab)), num_warps from the block (4, 8 from
2048 columns, 16 from 8192, 32 from 32768), `batchmean` reduction, probabilities (not
log-probabilities) as the target, eps 1e-10.  Knobs: `block_size` (columns per step) and
`num_warps`, None keeping Liger's.

Liger allocates the per-row totals on every call; here they are allocated in `prepare`
(set-up per batch, outside the timed call).  Nothing is written into the inputs.
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
LIGER_BLOCK_CAP = 65536 // 4  # liger's MAX_FUSED_SIZE for CUDA
EPS = 1e-10  # liger's default


@dataclass(frozen=True)
class LigerKlDivConfig:
    block_size: int | None = None  # None: liger's min(16384, next_pow2(vocab))
    num_warps: int | None = None  # None: liger's get_num_warps(block)


def prepare(
    cfg: LigerKlDivConfig, log_q: torch.Tensor, p: torch.Tensor
) -> Callable[[], torch.Tensor]:
    fix_scalar_index_if_interpreting()
    from liger_kernel.ops import kl_div as liger

    if log_q.shape != p.shape or log_q.dim() != 2:
        raise ValueError(
            "the student log-probabilities and the teacher probabilities must both be [rows, vocab]"
        )
    if log_q.stride(-1) != 1 or p.stride(-1) != 1:
        raise ValueError("both inputs must be contiguous in their last dimension")
    rows, vocab = log_q.shape
    block = cfg.block_size or min(LIGER_BLOCK_CAP, triton.next_power_of_2(vocab))
    warps = cfg.num_warps or liger.get_num_warps(block)
    row_loss = torch.zeros(rows, dtype=torch.float32, device=log_q.device)
    batchmean = liger._REDUCTION_MODE_BATCHMEAN.value

    def launch() -> torch.Tensor:
        with _common.interpreter_float_scalars():
            handle = liger._kldiv_kernel_forward[(rows,)](
                log_q, log_q.stride(0), p, p.stride(0), row_loss, row_loss.stride(0), vocab,
                eps=EPS, BLOCK_SIZE=block, num_warps=warps, log_target=False,
                reduction=batchmean,
            )  # fmt: skip
        loss = row_loss.sum() / rows
        _common.record(
            LAST_INFO, handle, kernels=3,
            kernel_names=["_kldiv_kernel_forward", "row_loss_sum", "batchmean_div"],
            block_size=block, num_warps=warps, programs=rows,
        )  # fmt: skip
        return loss

    return launch
