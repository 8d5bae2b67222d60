"""The Triton tutorial matmul kernel (03-matrix-multiplication.py), one fixed configuration.

The tutorial wraps `matmul_kernel` in `@triton.autotune` over sixteen configurations;
scripts/fetch_third_party.py keeps the kernel without that decorator (and `leaky_relu`,
which it calls), so each version launches exactly the configuration its `CONFIG` names:
the knobs.  The launch is the tutorial's `matmul()`: a 1-D grid of
cdiv(M, BLOCK_SIZE_M) * cdiv(N, BLOCK_SIZE_N) programs, grouped GROUP_SIZE_M rows of
tiles at a time for L2 reuse; the output is fp16 whatever the inputs (the tutorial's
`accumulator.to(tl.float16)`).  The output allocation happens in `prepare`.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import torch
import triton

from foreign import _common

LAST_INFO: dict[str, Any] = {}


@dataclass(frozen=True)
class MatmulConfig:
    """One `triton.Config` of the tutorial: the spec's knobs for the triton family."""

    block_size_m: int = 128
    block_size_n: int = 256
    block_size_k: int = 64
    group_size_m: int = 8
    num_stages: int = 3
    num_warps: int = 8


def prepare(cfg: MatmulConfig, a: torch.Tensor, b: torch.Tensor) -> Callable[[], torch.Tensor]:
    mod = _common.load_source("triton_matmul")
    if a.shape[1] != b.shape[0]:
        raise ValueError(f"incompatible shapes {tuple(a.shape)} @ {tuple(b.shape)}")
    if not a.is_contiguous():
        raise ValueError("A must be contiguous (the tutorial's constraint)")
    m, k = a.shape
    _, n = b.shape
    c = torch.empty((m, n), device=a.device, dtype=torch.float16)
    grid = (triton.cdiv(m, cfg.block_size_m) * triton.cdiv(n, cfg.block_size_n),)

    def launch() -> torch.Tensor:
        handle = mod.matmul_kernel[grid](
            a,
            b,
            c,
            m,
            n,
            k,
            a.stride(0),
            a.stride(1),
            b.stride(0),
            b.stride(1),
            c.stride(0),
            c.stride(1),
            BLOCK_SIZE_M=cfg.block_size_m,
            BLOCK_SIZE_N=cfg.block_size_n,
            BLOCK_SIZE_K=cfg.block_size_k,
            GROUP_SIZE_M=cfg.group_size_m,
            ACTIVATION="",
            num_stages=cfg.num_stages,
            num_warps=cfg.num_warps,
        )
        _common.record(
            LAST_INFO, handle, kernels=1, kernel_names=["matmul_kernel"], programs=grid[0]
        )
        return c

    return launch
