"""FlagGems' batch-norm forward (src/flag_gems/ops/batch_norm.py, v5.0.2:
`batch_norm_forward_kernel`), launched as FlagGems' `batch_norm` launches it in training
mode so that its launch choices are knobs.

One program per channel.  Statistics: it walks the channel's batch x spatial plane in
BLOCK_M x BLOCK_N tiles (BLOCK_M images, BLOCK_N pixels), each lane of the tile keeping its
own running mean and sum of squared deviations (Welford) in fp32, then merges the lanes
into the channel's mean and biased variance, stores the mean and 1 / sqrt(var + eps) and
updates the running mean and (unbiased) variance in place.  Normalisation: a second walk
over the same tiles reads x again and writes weight * (x - mean) * inv_std + bias.

FlagGems' launch: `@triton.heuristics` picks BLOCK_M = min(2048, next_pow2(batch)) and
BLOCK_N = min(next_pow2(spatial), max(1, 16384 // BLOCK_M)), and `@triton.autotune` runs
over the generated configurations of its nvidia tuning YAML (num_warps 4, 8, 16; the
Hopper YAML does not override it; the loader generates them last value first) with the
loader's default 2 stages.  Here None keeps the list's first value, 4 warps, not the
autotuner's pick.  Knobs: the two tile sides, warps and stages, None keeping that choice.  FlagGems
allocates y, the mean and the inverse standard deviation per call; here they are made in
`prepare`.  Its mean and inverse standard deviation are in the input dtype; here fp32
(torch's saved statistics are fp32), which the kernel's stores convert to either way.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import torch
import triton

from foreign import _common, _libdevice_cpu

LAST_INFO: dict[str, Any] = {}
# the first value of the warps list in the nvidia tuning YAML's batch_norm entry
FLAGGEMS_WARPS = 4
FLAGGEMS_STAGES = 2  # FlagGems' config loader's default
MOMENTUM = 0.1
EPS = 1e-5


def flaggems_blocks(batch: int, spatial: int) -> tuple[int, int]:
    """FlagGems' heuristics: (BLOCK_M, BLOCK_N), at most 16384 elements per tile."""
    block_m = min(2048, triton.next_power_of_2(batch))
    block_n = min(triton.next_power_of_2(spatial), max(1, 2**14 // block_m))
    return block_m, block_n


@dataclass(frozen=True)
class BatchNormConfig:
    block_m: int | None = None  # None: FlagGems' min(2048, next_pow2(batch)) images per tile
    block_n: int | None = None  # None: FlagGems' pixels per tile (16384 elements a tile)
    num_warps: int | None = None  # None: FlagGems' 4
    num_stages: int | None = None  # None: FlagGems' 2


def prepare(
    cfg: BatchNormConfig, x: torch.Tensor, weight: torch.Tensor, bias: torch.Tensor,
    running_mean: torch.Tensor, running_var: torch.Tensor,
) -> Callable[[], Any]:  # fmt: skip
    mod = _common.load_source("flaggems_batch_norm")
    if x.dim() != 4 or not x.is_contiguous():
        raise ValueError("x must be a contiguous [n, c, h, w] tensor")
    n, c, h, w = x.shape
    x3 = x.view(n, c, h * w)
    out = torch.empty_like(x3)
    mean = torch.empty(c, device=x.device, dtype=torch.float32)
    inv_std = torch.empty(c, device=x.device, dtype=torch.float32)
    fg_m, fg_n = flaggems_blocks(n, h * w)
    bm = cfg.block_m or fg_m
    bn = cfg.block_n or fg_n
    warps = cfg.num_warps or FLAGGEMS_WARPS
    stages = cfg.num_stages or FLAGGEMS_STAGES

    def launch() -> tuple[torch.Tensor, ...]:
        with _common.interpreter_libdevice(mod, rsqrt=_libdevice_cpu.rsqrt):
            handle = mod.batch_norm_forward_kernel[(c,)](
                x3, weight, bias, mean, inv_std, out, running_mean, running_var, n, h * w,
                *x3.stride(), *out.stride(), MOMENTUM, EPS, is_train=True, BLOCK_M=bm,
                BLOCK_N=bn, num_warps=warps, num_stages=stages,
            )  # fmt: skip
        _common.record(
            LAST_INFO, handle, kernels=1, kernel_names=["batch_norm_forward_kernel"],
            block_m=bm, block_n=bn, num_warps=warps, num_stages=stages, programs=c,
        )  # fmt: skip
        return out.view_as(x), mean, inv_std, running_mean, running_var

    return launch
