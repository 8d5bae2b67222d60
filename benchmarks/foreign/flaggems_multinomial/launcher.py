"""FlagGems' multinomial sampling with replacement (src/flag_gems/ops/multinomial.py,
v5.0.2: `multinomial_with_replacement`), launched as FlagGems' `multinomial` launches it
for more than one sample with replacement, so that its launch choices are knobs.

A 2-D grid: grid.x covers a distribution's samples NBLOCK at a time, grid.y the
distributions.  Each lane draws one uniform from a Philox4x32-10 call on its counter (the
first of the call's four words; the other three are dropped), then binary-searches its
distribution's normalised CDF: floor(log2(categories)) + 1 dependent steps, each a gathered
fp32 load of the CDF at the lane's midpoint, and stores the found category as int64.

FlagGems' launch: `multinomial_with_replacement[grid](cdf, out, K, N, seed, offset)` with
no launch options: NBLOCK keeps the kernel's default 128, and Triton's defaults give 4 warps
and 3 stages.  Knobs: the samples per program, the warps and the stages (the search loop
holds the loads), None keeping those defaults.  FlagGems computes the CDF first
(`normed_cumsum`, its own launches: a cumsum and a divide), reads the Philox seed and offset
from the device generator on the host and allocates the output in every call; here the CDF,
the seed and the offset come with the inputs and the output is made in `prepare`: the timed
call is the one launch.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import torch
import triton

from foreign import _common

LAST_INFO: dict[str, Any] = {}
KERNEL_NBLOCK = 128  # the kernel's default NBLOCK, which FlagGems' launch keeps
TRITON_DEFAULT_WARPS = 4
TRITON_DEFAULT_STAGES = 3


@dataclass(frozen=True)
class MultinomialConfig:
    nblock: int | None = None  # None: the kernel's default, 128 samples per program
    num_warps: int | None = None  # None: Triton's default, 4
    num_stages: int | None = None  # None: Triton's default, 3


def prepare(
    cfg: MultinomialConfig, cdf: torch.Tensor, samples: int, philox_seed: int,
    philox_offset: int,
) -> Callable[[], torch.Tensor]:  # fmt: skip
    mod = _common.load_source("flaggems_multinomial")
    if cdf.dim() != 2 or not cdf.is_contiguous():
        raise ValueError("cdf must be a contiguous [dists, categories] matrix")
    dists, categories = cdf.shape
    nblock = cfg.nblock or KERNEL_NBLOCK
    warps = cfg.num_warps or TRITON_DEFAULT_WARPS
    stages = cfg.num_stages or TRITON_DEFAULT_STAGES
    out = torch.empty(dists, samples, dtype=torch.int64, device=cdf.device)
    grid = (triton.cdiv(samples, nblock), dists)

    def launch() -> torch.Tensor:
        handle = mod.multinomial_with_replacement[grid](
            cdf, out, categories, samples, philox_seed, philox_offset, NBLOCK=nblock,
            num_warps=warps, num_stages=stages,
        )  # fmt: skip
        _common.record(
            LAST_INFO, handle, kernels=1, kernel_names=["multinomial_with_replacement"],
            nblock=nblock, num_warps=warps, num_stages=stages, programs=grid[0] * grid[1],
        )  # fmt: skip
        return out

    return launch
