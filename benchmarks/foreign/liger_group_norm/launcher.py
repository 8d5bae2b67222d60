"""Liger-Kernel's GroupNorm forward (liger_kernel.ops.group_norm, 0.8.5), launched by our
copy of Liger's `group_norm_forward` so that its launch choices are knobs.

One program per (sample, group): a first loop over the group's c/groups x hw elements in
BLOCK_SIZE steps sums x and x^2 (variance = E[x^2] - mean^2), a second loop re-reads x and
writes y = (x - mean) * rstd * w[channel] + b[channel]; mean and rstd per (sample, group)
are kept for the backward pass.  Liger's choices: BLOCK_SIZE = min(65536,
next_pow2(c/groups * hw)) and no num_warps (Triton's default, 4).  Knobs: `block_size`
(elements per loop step) and `num_warps`, None keeping Liger's.  Buffers are allocated in
`prepare`.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import torch
import triton

from foreign import _common, _libdevice_cpu
from kbopt.bench.interpreter import fix_scalar_index_if_interpreting

LAST_INFO: dict[str, Any] = {}
MAX_FUSED_SIZE = 65536  # liger's cap on BLOCK_SIZE for CUDA
TRITON_DEFAULT_WARPS = 4


@dataclass(frozen=True)
class LigerGroupNormConfig:
    block_size: int | None = None  # None: liger's min(65536, next_pow2(group size))
    num_warps: int | None = None  # None: Triton's default (Liger passes none)


def prepare(
    cfg: LigerGroupNormConfig, x: torch.Tensor, w: torch.Tensor, b: torch.Tensor, groups: int,
    eps: float,
) -> Callable[[], torch.Tensor]:  # fmt: skip
    fix_scalar_index_if_interpreting()
    from liger_kernel.ops import group_norm as liger

    shape = x.shape
    batch, channels = shape[0], shape[1]
    if channels % groups:
        raise ValueError(f"{channels} channels do not split into {groups} groups")
    x3 = x.view(batch, groups, -1)
    if not x3.is_contiguous():
        raise ValueError("x must be contiguous")
    hidden = x3.shape[-1]
    block = cfg.block_size or min(MAX_FUSED_SIZE, triton.next_power_of_2(hidden))
    warps = cfg.num_warps or TRITON_DEFAULT_WARPS
    y = torch.empty((batch, groups, hidden), dtype=x.dtype, device=x.device)
    mean = torch.zeros((batch, groups), dtype=x.dtype, device=x.device)
    rstd = torch.zeros((batch, groups), dtype=x.dtype, device=x.device)
    args = (
        y, y.stride(0), y.stride(1), x3, x3.stride(0), x3.stride(1),
        mean, mean.stride(0), mean.stride(1), rstd, rstd.stride(0), rstd.stride(1),
        w, b, hidden, channels // groups, eps,
    )  # fmt: skip

    def launch() -> torch.Tensor:
        with (
            _common.interpreter_float_scalars(),
            _common.interpreter_libdevice(liger, rsqrt=_libdevice_cpu.rsqrt),
        ):
            handle = liger._group_norm_forward_kernel[(batch, groups)](
                *args, BLOCK_SIZE=block, num_warps=warps
            )
        _common.record(
            LAST_INFO, handle, kernels=1, kernel_names=["_group_norm_forward_kernel"],
            block_size=block, num_warps=warps, programs=batch * groups,
        )  # fmt: skip
        return y.view(*shape)

    return launch
