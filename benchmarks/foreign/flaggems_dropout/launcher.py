"""FlagGems' dropout forward (src/flag_gems/ops/dropout.py, v5.0.2: `dropout_forward_kernel`),
launched as FlagGems' `dropout` (aten::native_dropout in training) launches it, so that its
launch choices are knobs.

One program per 4 BLOCK elements of the flattened input: a single Philox4x32-10 call on
BLOCK counters (offset + program * BLOCK + lane) gives four 32-bit words per lane, each
turned into a uniform that keeps (above p) or drops one element of one of the program's
four BLOCK-element slices; the program stores the bool keep mask and y = x / (1 - p) *
kept, every load and store with evict_first.

FlagGems' launch: `@triton.heuristics` (the nvidia heuristics, which Hopper's file does not
override): BLOCK 512 up to 512 elements, else 1024; warps 4 up to 512 elements, 8 up to
1024, else 16; Triton's default 3 stages (no loop).  BLOCK is no knob: it lays out the
random stream (which counter and which of its four words masks an element), so another
BLOCK draws another mask; the grid follows from it.  Knob: the warps, None keeping FlagGems'
heuristic.  FlagGems reads the Philox seed and offset from the device generator on the host
in every call (`philox_backend_seed_offset`: get_state, the offset advanced by the element
count rounded up to 4, set_state) and allocates y and the mask; here the seed and offset
come with the inputs and y and the mask are made in `prepare`: the timed call is the one
launch.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import torch
import triton

from foreign import _common
from foreign.flaggems_dropout.reference import UNROLL, P, flaggems_block, flaggems_warps

LAST_INFO: dict[str, Any] = {}
TRITON_DEFAULT_STAGES = 3


@dataclass(frozen=True)
class DropoutConfig:
    num_warps: int | None = None  # None: FlagGems' heuristic (16 above 1024 elements)


def prepare(
    cfg: DropoutConfig, x: torch.Tensor, philox_seed: int, philox_offset: int
) -> Callable[[], tuple[torch.Tensor, torch.Tensor]]:
    mod = _common.load_source("flaggems_dropout")
    x = x.contiguous()  # FlagGems' own contiguous(): a no-op on the inputs here
    n = x.numel()
    block = flaggems_block(n)
    warps = cfg.num_warps or flaggems_warps(n)
    y = torch.empty_like(x)
    keep = torch.empty_like(x, dtype=torch.bool)
    grid = (triton.cdiv(n, block * UNROLL),)

    def launch() -> tuple[torch.Tensor, torch.Tensor]:
        # compiled Triton passes p as an fp32 scalar; so does the interpreter here
        with _common.interpreter_float_scalars():
            handle = mod.dropout_forward_kernel[grid](
                x, y, keep, n, P, philox_seed, philox_offset, BLOCK=block, num_warps=warps
            )
        _common.record(
            LAST_INFO, handle, kernels=1, kernel_names=["dropout_forward_kernel"],
            block=block, num_warps=warps, num_stages=TRITON_DEFAULT_STAGES, programs=grid[0],
        )  # fmt: skip
        return y, keep

    return launch
