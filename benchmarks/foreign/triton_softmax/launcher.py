"""The Triton tutorial fused softmax (02-fused-softmax.py): persistent programs over rows.

The tutorial's `softmax()` compiles the kernel first (`softmax_kernel.warmup`), reads its
registers and shared memory, sizes a persistent grid of NUM_SM x occupancy programs (at
most one per row) and launches the compiled kernel, each program striding over rows with
`tl.range(..., num_stages=...)`.  The compile and the occupancy arithmetic are set-up and
happen in `prepare`; the timed call is the launch of the compiled kernel, as in the
tutorial.  Under the CPU interpreter (no compile, no device properties) the grid is one
program per row.  num_warps and num_stages are the knobs; BLOCK_SIZE is the next power of
two of the row (the kernel holds one whole row).
"""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import torch
import triton

from foreign import _common

LAST_INFO: dict[str, Any] = {}


@dataclass(frozen=True)
class SoftmaxConfig:
    num_warps: int = 8  # the tutorial's choice
    num_stages: int = 4  # the tutorial's choice where shared memory exceeds 200 KB (H100, H200)


def _persistent_programs(kernel: Any, device: torch.device, num_warps: int, n_rows: int) -> int:
    """The tutorial's grid: NUM_SM x occupancy (registers, then shared memory), <= n_rows."""
    props = triton.runtime.driver.active.utils.get_device_properties(device.index or 0)
    kernel._init_handles()
    n_regs = max(1, int(kernel.n_regs))
    size_smem = max(1, int(kernel.metadata.shared))
    occupancy = props["max_num_regs"] // (n_regs * props["warpSize"] * num_warps)
    occupancy = min(occupancy, props["max_shared_mem"] // size_smem)
    return max(1, min(props["multiprocessor_count"] * occupancy, n_rows))


def prepare(cfg: SoftmaxConfig, x: torch.Tensor) -> Callable[[], torch.Tensor]:
    mod = _common.load_source("triton_softmax")
    n_rows, n_cols = x.shape
    block = triton.next_power_of_2(n_cols)
    y = torch.empty_like(x)
    args = (y, x, x.stride(0), y.stride(0), n_rows, n_cols, block, cfg.num_stages)
    if os.environ.get("TRITON_INTERPRET") == "1" or x.device.type != "cuda":
        kernel, programs = mod.softmax_kernel, n_rows
        info: dict[str, Any] = {}
    else:
        kernel = mod.softmax_kernel.warmup(
            *args[:6],
            BLOCK_SIZE=block,
            num_stages=cfg.num_stages,
            num_warps=cfg.num_warps,
            grid=(1,),
        )
        programs = _persistent_programs(kernel, x.device, cfg.num_warps, n_rows)
        info = {"n_regs": kernel.n_regs, "shared": kernel.metadata.shared}

    def launch() -> torch.Tensor:
        kernel[(programs, 1, 1)](*args)
        LAST_INFO.clear()
        LAST_INFO.update(info, kernels=1, kernel_names=["softmax_kernel"], programs=programs)
        return y

    return launch
