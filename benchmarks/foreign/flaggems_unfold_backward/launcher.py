"""FlagGems' unfold backward (src/flag_gems/ops/unfold_backward.py, v5.0.2:
`_unfold_backward_kernel`), launched as FlagGems' `unfold_backward` launches it so that its
launch choices are knobs.

The input is the gradient of `x.unfold(dim, size, step)`, laid out [before, L, after, size]
(here [batch, frames, 1, window]).  Each program takes BLOCK consecutive elements of it,
works out each one's window s and offset k, and adds it (cast to fp32) into the fp32
output at position s * step + k of its row with `tl.atomic_add` (default semantics,
acq_rel).  Overlapping windows put two or three adds on a sample, from different programs.

FlagGems' launch: BLOCK = 128, Triton's default warps (4) and stages, one program per 128
elements, no autotuning; the fp32 output is `torch.zeros` per call and cast to the input
dtype after the kernel (unless that is fp32).  Knobs: the block and the warps, None keeping
that choice.  Here the fp32 buffer is allocated in `prepare`, and the timed call is its
zero-fill (torch's `zero_`), the kernel and the cast: three launches (two in fp32).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import torch
import triton

from foreign import _common

LAST_INFO: dict[str, Any] = {}
BLOCK = 128  # unfold_backward's fixed block


@dataclass(frozen=True)
class UnfoldBackwardConfig:
    block: int | None = None  # None: FlagGems' 128 elements per program
    num_warps: int | None = None  # None: Triton's default 4 (FlagGems passes none)


def prepare(
    cfg: UnfoldBackwardConfig, grad_frames: torch.Tensor, samples: int, hop: int
) -> Callable[[], Any]:
    mod = _common.load_source("flaggems_unfold_backward")
    if grad_frames.dim() != 3 or not grad_frames.is_contiguous():
        raise ValueError("grad_frames must be a contiguous [batch, frames, window] tensor")
    batch, frames, window = grad_frames.shape
    if frames != (samples - window) // hop + 1:
        raise ValueError("frames must be (samples - window) // hop + 1")
    numel = grad_frames.numel()
    prod_after = 1  # the unfolded dimension is the last of the input
    inner_total = frames * prod_after * window
    block = cfg.block or BLOCK
    warps = cfg.num_warps or 4
    grid = (triton.cdiv(numel, block),)
    acc = torch.empty(batch, samples, dtype=torch.float32, device=grad_frames.device)
    cast = grad_frames.dtype != torch.float32

    def launch() -> torch.Tensor:
        acc.zero_()
        handle = mod._unfold_backward_kernel[grid](
            grad_frames, acc, numel, prod_after, frames, window, hop, samples, inner_total,
            BLOCK=block, num_warps=warps,
        )  # fmt: skip
        _common.record(
            LAST_INFO, handle, kernels=3 if cast else 2,
            kernel_names=["zero_", "_unfold_backward_kernel"] + (["to"] if cast else []),
            block=block, num_warps=warps, programs=grid[0],
        )  # fmt: skip
        return acc.to(grad_frames.dtype) if cast else acc

    return launch
