"""FlagGems' masked_select (src/flag_gems/ops/masked_select.py, v5.0.2:
`mask_part_sum_kernel`, `write_back_kernel`), launched as FlagGems' `masked_select`
launches them above 4096 elements so that its launch choices are knobs.

A two-pass stream compaction over the flattened input, split into P programs that each own
a run of consecutive BLOCK_SIZE blocks.  First launch: each program counts its run's kept
elements (the mask's ones), stores the count, and takes a ticket from an atomic counter
(acquire-release); the program that draws the last ticket loads all P counts, scans them
into each program's starting offset and stores the total.  FlagGems then allocates the
output from that total (a device-to-host copy: the call waits for the first launch).
Second launch: each program walks its blocks again, scanning each block's mask
(`tl.cumsum`) to give every kept value its output position, and stores the values there.

FlagGems' launch: BLOCK_SIZE = the next power of two of the elements clamped to [128,
4096], num_warps = min(16, BLOCK_SIZE / 32), P = the SM count (fewer if there are fewer
blocks), no autotuning (the nvidia tuning YAML's masked_select entry is not read by this
path).  Knobs: the block, the warps and P, None keeping that choice; the SM count is the
device's (132 on the H200, assumed on the CPU).  The ticket counter (FlagGems' per-call
`torch.zeros`) is zeroed in the timed call, the count buffer made in `prepare`; the timed
call is the zeroing, the two kernels and the copy of the total that sizes the output.
FlagGems' single-program kernel for 4096 elements or fewer is not wrapped.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import torch
import triton

from foreign import _common

LAST_INFO: dict[str, Any] = {}
H200_SMS = 132
MIN_BLOCK, MAX_BLOCK = 128, 4096  # FlagGems' bracket_next_power_of_2(N, 128, 4096)


def _sms(device: torch.device) -> int:
    if device.type == "cuda":
        return int(torch.cuda.get_device_properties(device).multi_processor_count)
    return H200_SMS


@dataclass(frozen=True)
class MaskedSelectConfig:
    block_size: int | None = None  # None: FlagGems' next_pow2(elements) clamped to 128..4096
    num_warps: int | None = None  # None: min(16, block_size / 32)
    programs: int | None = None  # None: the SM count (at most one per block)


def prepare(cfg: MaskedSelectConfig, x: torch.Tensor, mask: torch.Tensor) -> Callable[[], Any]:
    mod = _common.load_source("flaggems_masked_select")
    if x.shape != mask.shape or not (x.is_contiguous() and mask.is_contiguous()):
        raise ValueError("x and mask must be contiguous tensors of one shape")
    n = x.numel()
    block = cfg.block_size or min(MAX_BLOCK, max(MIN_BLOCK, triton.next_power_of_2(n)))
    warps = cfg.num_warps or min(16, block // 32)
    n_blocks = triton.cdiv(n, block)
    np_ = min(n_blocks, cfg.programs or _sms(x.device))
    per_program = triton.cdiv(n_blocks, np_)
    np_ = triton.cdiv(n_blocks, per_program)
    np_block = triton.next_power_of_2(np_)
    count_dtype = torch.int32 if n < 2**31 else torch.int64
    part_sums = torch.empty(np_ + 1, dtype=count_dtype, device=x.device)
    ticket = torch.zeros([], dtype=torch.int32, device=x.device)

    def launch() -> torch.Tensor:
        ticket.zero_()
        mod.mask_part_sum_kernel[(np_,)](
            x, mask, part_sums, ticket, n, n_blocks, per_program, NP_BLOCK=np_block,
            BLOCK_SIZE=block, num_warps=warps,
        )  # fmt: skip
        out = torch.empty(int(part_sums[-1]), dtype=x.dtype, device=x.device)
        handle = mod.write_back_kernel[(np_,)](
            x, mask, part_sums, out, n, n_blocks, per_program, NP_BLOCK=np_block,
            BLOCK_SIZE=block, num_warps=warps,
        )  # fmt: skip
        _common.record(
            LAST_INFO, handle, kernels=3,
            kernel_names=["zero_", "mask_part_sum_kernel", "write_back_kernel"],
            block_size=block, num_warps=warps, programs=np_, blocks_per_program=per_program,
        )  # fmt: skip
        return out

    return launch
