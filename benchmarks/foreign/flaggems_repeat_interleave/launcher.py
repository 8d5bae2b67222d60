"""FlagGems' repeat_interleave of a repeats tensor (src/flag_gems/ops/repeat_interleave.py,
v5.0.2: `repeat_interleave_tensor_kernel`), launched as FlagGems' `repeat_interleave`
launches it so that its launch choices are knobs.

One program per entry of the repeats (here per expert): it loads its running total and its
count, and writes its own index `count` times from offset `total - count`, BLOCK_SIZE
elements per loop step (a data-dependent loop: a hot expert's program loops for hundreds
of steps while a cold one's does not loop at all).

FlagGems' launch: BLOCK_SIZE = 32, num_warps = 1, one program per entry, no autotuning.
Knobs: the block and the warps, None keeping that choice.  FlagGems computes the running
totals (torch's cumsum) and copies the last to the host to size the output in every call;
here both are done in `prepare`, as a caller that passes `output_size` already knows the
number of rows (FlagGems' kernel takes no other input), so the timed call is the kernel.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import torch

from foreign import _common

LAST_INFO: dict[str, Any] = {}
BLOCK_SIZE, NUM_WARPS = 32, 1  # repeat_interleave_tensor's constants


@dataclass(frozen=True)
class RepeatInterleaveConfig:
    block_size: int | None = None  # None: FlagGems' 32 elements per loop step
    num_warps: int | None = None  # None: FlagGems' 1


def prepare(cfg: RepeatInterleaveConfig, counts: torch.Tensor) -> Callable[[], Any]:
    mod = _common.load_source("flaggems_repeat_interleave")
    if counts.dim() != 1:
        raise ValueError("counts must be a 1-D tensor")
    size = counts.numel()
    ends = counts.cumsum(0)  # FlagGems: repeats.cumsum(axis=0) in every call
    total = int(ends[-1])  # FlagGems: cumsum[-1].item() in every call
    out = torch.empty(total, dtype=counts.dtype, device=counts.device)
    block = cfg.block_size or BLOCK_SIZE
    warps = cfg.num_warps or NUM_WARPS

    def launch() -> torch.Tensor:
        handle = mod.repeat_interleave_tensor_kernel[(size,)](
            counts, ends, out, size, BLOCK_SIZE=block, num_warps=warps
        )
        _common.record(
            LAST_INFO, handle, kernels=1, kernel_names=["repeat_interleave_tensor_kernel"],
            block_size=block, num_warps=warps, programs=size,
        )  # fmt: skip
        return out

    return launch
