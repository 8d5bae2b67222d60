"""Liger-Kernel's experimental int8 x int2 matmul (liger_kernel.ops.experimental.mm_int8int2,
0.8.5): `matmul_kernel`, launched by our copy of Liger's `matmul` so that the autotuner's
choices are knobs.

A 1-D grid of cdiv(m, BLOCK_M) * cdiv(n, BLOCK_N) programs, grouped GROUP_M row-tiles at a
time along n.  A program owns a BLOCK_M x BLOCK_N int32 accumulator and runs the packed
K / 4 rows four times: pass i loads a BLOCK_M x BLOCK_K tile of the int8 activations from
the i-th quarter of K and a BLOCK_K x BLOCK_N tile of packed bytes, extracts the i-th 2-bit
field (shift and mask), subtracts 1 and feeds an int8 tl.dot (int32 accumulation); every
packed byte is thus loaded four times.  K is a compile-time constant and must be a multiple
of 4 * BLOCK_K.  Liger autotunes over 15 configurations (keyed on m, n, k); here the plain
kernel under the autotuner (its `.fn`) is launched with the configuration the version
names, since tuning would compile 15 int8 tl.dot kernels per run.  Knobs: `block_m`,
`block_n`, `block_k`, `group_m`, `num_warps`, `num_stages`.  The int32 output is
allocated in `prepare`.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import torch
import triton

from foreign import _common
from kbopt.bench.interpreter import fix_scalar_index_if_interpreting

LAST_INFO: dict[str, Any] = {}


@dataclass(frozen=True)
class LigerMmInt8Int2Config:
    block_m: int = 128
    block_n: int = 256
    block_k: int = 64
    group_m: int = 8
    num_warps: int = 8
    num_stages: int = 3


def prepare(
    cfg: LigerMmInt8Int2Config, a: torch.Tensor, packed: torch.Tensor
) -> Callable[[], torch.Tensor]:
    fix_scalar_index_if_interpreting()
    from liger_kernel.ops.experimental import mm_int8int2 as liger

    if a.dim() != 2 or packed.dim() != 2 or a.shape[1] != 4 * packed.shape[0]:
        raise ValueError("a [m, k] int8 and packed [k / 4, n] uint8 (four weights per byte)")
    if a.dtype != torch.int8 or packed.dtype != torch.uint8:
        raise ValueError(f"a must be int8 and packed uint8, got {a.dtype} and {packed.dtype}")
    if not a.is_contiguous():
        raise ValueError("a must be contiguous (liger asserts it)")
    m, k = a.shape
    n = packed.shape[1]
    if k % (4 * cfg.block_k):
        raise ValueError(f"k={k} must be a multiple of 4 * block_k = {4 * cfg.block_k}")
    c = torch.empty(m, n, dtype=torch.int32, device=a.device)
    grid = (triton.cdiv(m, cfg.block_m) * triton.cdiv(n, cfg.block_n),)
    kernel = liger.matmul_kernel.fn  # the plain kernel under the autotuner

    def launch() -> torch.Tensor:
        handle = kernel[grid](
            a, packed, c, m, n, k, a.stride(0), a.stride(1), packed.stride(0),
            packed.stride(1), c.stride(0), c.stride(1), BLOCK_SIZE_M=cfg.block_m,
            BLOCK_SIZE_N=cfg.block_n, BLOCK_SIZE_K=cfg.block_k, GROUP_SIZE_M=cfg.group_m,
            num_warps=cfg.num_warps, num_stages=cfg.num_stages,
        )  # fmt: skip
        _common.record(
            LAST_INFO, handle, kernels=1, kernel_names=["matmul_kernel"], block_m=cfg.block_m,
            block_n=cfg.block_n, block_k=cfg.block_k, group_m=cfg.group_m,
            num_warps=cfg.num_warps, num_stages=cfg.num_stages, programs=grid[0],
        )  # fmt: skip
        return c

    return launch
