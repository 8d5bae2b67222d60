"""FlagGems' NLL loss forward with a mean reduction (src/flag_gems/ops/nllloss.py, v5.0.2:
`nll_loss_forward_kernel`), launched as FlagGems' `nll_loss_forward` launches it for
[N, C] log-probabilities, so that its launch choices are knobs.

Each program takes BLOCK_N consecutive rows (tokens): it loads their int64 targets, drops
the rows whose target is the ignore index (-100), gathers each kept row's log-probability
at its target (one scattered element per row, rows C elements apart), and sums their
negatives and its kept-row count in fp32.  It then adds both into an fp32 [4] buffer with
relaxed atomics and bumps a program counter there (release); the program that sees the
counter reach the grid's size divides the two sums and stores the mean in the buffer's
last element.  FlagGems casts the buffer to the input dtype and returns its last element.

FlagGems' launch: the kernel's default BLOCK_N = 128 (its wrapper passes none and the
kernel has no autotune or heuristic, only @libentry), Triton's default warps (4) and
stages; the fp32 [4] buffer is `torch.zeros` per call.  Knobs: the rows per program and the
warps, None keeping that choice; the kernel has no loop, so the stages are no knob.  Here
the buffer is allocated in `prepare`, and the timed call is its zero-fill (torch's
`zero_`), the kernel and the cast (three launches; two in fp32, where the cast is none).

Under the CPU interpreter only, the kernel is imported from a rewritten copy of the fetched
file: its `not` and `and` on tensors read element-wise (as compiled Triton reads them; the
interpreter would take a tensor's truth), and its target-range `assert`, a device assert
that compiled Triton drops unless debugging (and that the ignore index itself would fail),
is left out.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass
from types import ModuleType
from typing import Any

import torch
import triton

from foreign import _common

LAST_INFO: dict[str, Any] = {}
BLOCK_N = 128  # nll_loss_forward_kernel's default BLOCK_N (FlagGems' wrapper passes none)
IGNORE_INDEX = -100  # torch's and FlagGems' default ignore_index
MEAN = 1  # FlagGems' reduction code for "mean"


@dataclass(frozen=True)
class NllLossConfig:
    block_n: int | None = None  # None: the kernel's default 128 rows per program
    num_warps: int | None = None  # None: Triton's default 4 (FlagGems passes none)


def _module() -> ModuleType:
    if os.environ.get("TRITON_INTERPRET") == "1":
        return _common.load_source_rewritten(
            "flaggems_nll_loss", _common.ElementwiseBoolOps(drop_asserts=True)
        )
    return _common.load_source("flaggems_nll_loss")


def prepare(cfg: NllLossConfig, logp: torch.Tensor, target: torch.Tensor) -> Callable[[], Any]:
    mod = _module()
    if logp.dim() != 2 or not logp.is_contiguous() or not target.is_contiguous():
        raise ValueError("logp must be a contiguous [N, C] matrix and target contiguous")
    n, c = logp.shape
    if target.shape != (n,) or target.dtype != torch.int64:
        raise ValueError("target must be int64 [N]")
    block = cfg.block_n or BLOCK_N
    warps = cfg.num_warps or 4
    grid = (triton.cdiv(n, block),)
    out = torch.zeros(4, dtype=torch.float32, device=logp.device)
    cast = logp.dtype != torch.float32

    def launch() -> torch.Tensor:
        out.zero_()
        handle = mod.nll_loss_forward_kernel[grid](
            logp, target, None, out, IGNORE_INDEX, n, c, MEAN, BLOCK_N=block, num_warps=warps
        )
        _common.record(
            LAST_INFO, handle, kernels=3 if cast else 2,
            kernel_names=["zero_", "nll_loss_forward_kernel"] + (["to"] if cast else []),
            block_n=block, num_warps=warps, programs=grid[0],
        )  # fmt: skip
        return out.to(logp.dtype)[3]

    return launch
