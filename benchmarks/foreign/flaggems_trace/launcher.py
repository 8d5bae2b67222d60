"""FlagGems' trace (src/flag_gems/ops/trace.py, v5.0.2: `trace_kernel`), launched as
FlagGems' `trace` launches it for a 2-D floating-point matrix, so that its launch choices
are knobs.

One program (grid (1,)) walks the diagonal BLOCK_SIZE elements at a time: each step loads
BLOCK_SIZE diagonal elements, stride0 + stride1 elements apart (each in its own memory
sector), and adds them into an fp32 vector; the vector is summed at the end and stored in
the matrix's dtype.

FlagGems' launch: BLOCK_SIZE 1024, or the next power of two of the diagonal's length below
1024; Triton's default 4 warps and 3 stages (it passes none); no autotune.  Knobs: the
block, the warps and the stages (the diagonal loop), None keeping FlagGems'.  FlagGems
allocates the 0-d output per call; here it is made in `prepare`.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import torch
import triton

from foreign import _common

LAST_INFO: dict[str, Any] = {}
FLAGGEMS_BLOCK = 1024  # trace's BLOCK_SIZE
TRITON_DEFAULT_WARPS = 4
TRITON_DEFAULT_STAGES = 3


def flaggems_block(num_diag: int) -> int:
    """FlagGems' BLOCK_SIZE for a diagonal of num_diag elements."""
    return FLAGGEMS_BLOCK if num_diag >= FLAGGEMS_BLOCK else triton.next_power_of_2(num_diag)


@dataclass(frozen=True)
class TraceConfig:
    block_size: int | None = None  # None: FlagGems' 1024 (the diagonal's power of two below)
    num_warps: int | None = None  # None: Triton's default 4 (FlagGems passes none)
    num_stages: int | None = None  # None: Triton's default 3 (FlagGems passes none)


def prepare(cfg: TraceConfig, a: torch.Tensor) -> Callable[[], torch.Tensor]:
    mod = _common.load_source("flaggems_trace")
    if a.dim() != 2 or not a.dtype.is_floating_point:
        raise ValueError("a must be a 2-D floating-point matrix")
    num_diag = min(a.shape)
    block = cfg.block_size or flaggems_block(num_diag)
    warps = cfg.num_warps or TRITON_DEFAULT_WARPS
    stages = cfg.num_stages or TRITON_DEFAULT_STAGES
    out = torch.empty((), dtype=a.dtype, device=a.device)
    stride0, stride1 = a.stride()

    def launch() -> torch.Tensor:
        handle = mod.trace_kernel[(1,)](
            a, out, num_diag, stride0, stride1, BLOCK_SIZE=block, num_warps=warps,
            num_stages=stages,
        )  # fmt: skip
        _common.record(
            LAST_INFO, handle, kernels=1, kernel_names=["trace_kernel"], block_size=block,
            num_warps=warps, num_stages=stages, programs=1,
            steps=triton.cdiv(num_diag, block),
        )  # fmt: skip
        return out

    return launch
