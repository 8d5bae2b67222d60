"""FlagGems' whole-tensor L2 norm (src/flag_gems/ops/vector_norm.py, v5.0.2:
`l2_norm_kernel_1` and `l2_norm_kernel_2`), launched as FlagGems' `vector_norm` launches
them for `ord=2` over every dimension, so that its launch choices are knobs.

Two launches.  The first has one program per BLOCK_SIZE consecutive elements of the
flattened tensor: it loads its block (masked at the end), squares it in fp32, sums it with
`tl.sum` and stores the sum into a partial buffer of MID_SIZE = cdiv(numel, BLOCK_SIZE)
values, in the input's dtype (bf16 partials for a bf16 tensor).  The second is one program
that loads all MID_SIZE partials through a BLOCK_MID-wide tile (the next power of two of
MID_SIZE: no loop), sums them in fp32 and stores the square root, in the input's dtype.

FlagGems' launch: BLOCK_SIZE = next_power_of_2(ceil(sqrt(numel))), so both launches hold
about sqrt(numel) values per program; Triton's default warps (4) for both (FlagGems passes
none, no autotuning; the `vector_norm` entry of the tuning YAML is for the per-row kernel).
Knobs: the first launch's block and warps and the second's warps, None keeping FlagGems';
BLOCK_MID stays the next power of two of MID_SIZE (the second kernel has no loop, so its
tile must hold every partial), and a block that would make it wider than 65,536 is refused.
Neither kernel has a loop, so the stages are no knob.  FlagGems allocates the partials and
the output per call; here they are made in `prepare`.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import torch
import triton

from foreign import _common

LAST_INFO: dict[str, Any] = {}
TRITON_DEFAULT_WARPS = 4
MAX_BLOCK_MID = 65536  # the second kernel's one program holds every partial in registers


@dataclass(frozen=True)
class VectorNormConfig:
    block_size: int | None = None  # None: FlagGems' next power of two of ceil(sqrt(numel))
    num_warps: int | None = None  # None: Triton's default 4 (FlagGems passes none)
    mid_warps: int | None = None  # None: Triton's default 4, the second launch


def flaggems_block(numel: int) -> int:
    return triton.next_power_of_2(math.ceil(math.sqrt(numel)))


def prepare(cfg: VectorNormConfig, x: torch.Tensor) -> Callable[[], torch.Tensor]:
    mod = _common.load_source("flaggems_vector_norm")
    if not x.is_contiguous() or x.numel() == 0:
        raise ValueError("x must be contiguous and not empty")
    m = x.numel()
    block = cfg.block_size or flaggems_block(m)
    mid_size = triton.cdiv(m, block)
    block_mid = triton.next_power_of_2(mid_size)
    if block_mid > MAX_BLOCK_MID:
        raise ValueError(
            f"block_size {block} leaves {mid_size} partials: the second kernel's one program "
            f"would hold {block_mid} (at most {MAX_BLOCK_MID})"
        )
    warps = cfg.num_warps or TRITON_DEFAULT_WARPS
    mid_warps = cfg.mid_warps or TRITON_DEFAULT_WARPS
    mid = torch.empty(mid_size, dtype=x.dtype, device=x.device)
    out = torch.empty((), dtype=x.dtype, device=x.device)

    def launch() -> torch.Tensor:
        handle = mod.l2_norm_kernel_1[(mid_size,)](x, mid, m, block, num_warps=warps)
        mod.l2_norm_kernel_2[(1,)](mid, out, mid_size, block_mid, num_warps=mid_warps)
        _common.record(
            LAST_INFO, handle, kernels=2, kernel_names=["l2_norm_kernel_1", "l2_norm_kernel_2"],
            block_size=block, num_warps=warps, block_mid=block_mid, mid_warps=mid_warps,
            programs=mid_size,
        )  # fmt: skip
        return out

    return launch
