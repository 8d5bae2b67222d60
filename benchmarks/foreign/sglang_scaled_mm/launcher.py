"""SGLang's per-token x per-channel scaled fp8 GEMM (python/sglang/srt/layers/quantization/
fp8_kernel.py, v0.5.9: `scaled_mm_kernel`, adapted from vLLM's compressed-tensors
triton_scaled_mm), launched as SGLang's `triton_scaled_mm` launches it, so that its launch
choices are knobs.

C = (A B) * a_s * b_s^T with A [M, K] e4m3 and one fp32 scale per token (a_s [M, 1]), B
[K, N] e4m3 (the checkpoint's [N, K] weight viewed transposed, as `apply_fp8_linear` keeps
it) with one fp32 scale per output channel (b_s [N, 1]).  One program per BLOCK_SIZE_M x
BLOCK_SIZE_N tile of C, in row-major tile order (no grouping), loops over K in BLOCK_SIZE_K
steps with masked loads (an fp8 tl.dot per step into an fp32 accumulator), then scales the
tile once by its rows' and columns' scales, casts it to C's dtype (a bias, none here, would
be added after the cast) and stores it masked.

SGLang's launch (its `use_heuristic` tile table on the next power of two of M, at least
32): (64, 64, 256) for M <= 32 and N < 8192, (64, 128, 256) for M <= 32 and wider N,
(64, 64, 256) up to 64, (64, 128, 128) up to 128, (128, 128, 128) beyond; Triton's default
4 warps and 3 stages (it passes none).  Knobs: the three tiles, the warps and the stages,
None keeping SGLang's.  SGLang allocates C per call; here it is allocated in `prepare`.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import torch
import triton
import triton.language as tl

from foreign import _common

LAST_INFO: dict[str, Any] = {}
TRITON_DEFAULT = {"num_warps": 4, "num_stages": 3}


def sglang_tiles(m: int, n: int) -> tuple[int, int, int]:
    """`triton_scaled_mm`'s heuristic tile table."""
    small_n = n < 8192
    m2 = max(32, triton.next_power_of_2(m))
    if m2 <= 32:
        return (64, 64, 256) if small_n else (64, 128, 256)
    if m2 <= 64:
        return (64, 64, 256)
    if m2 <= 128:
        return (64, 128, 128)
    return (128, 128, 128)


@dataclass(frozen=True)
class ScaledMmConfig:
    block_m: int | None = None  # None: SGLang's heuristic tile
    block_n: int | None = None
    block_k: int | None = None
    num_warps: int | None = None  # None: Triton's default 4 (SGLang passes none)
    num_stages: int | None = None  # None: Triton's default 3


def prepare(
    cfg: ScaledMmConfig, a: torch.Tensor, b: torch.Tensor, a_s: torch.Tensor,
    b_s: torch.Tensor, out_dtype: torch.dtype,
) -> Callable[[], torch.Tensor]:  # fmt: skip
    mod = _common.load_source("sglang_fp8_mla_scaled_mm")
    m, k = a.shape
    k_b, n = b.shape
    if k_b != k or a_s.shape != (m, 1) or b_s.shape != (n, 1):
        raise ValueError("A [M, K], B [K, N], a_s [M, 1] and b_s [N, 1] expected")
    tm, tn, tk = sglang_tiles(m, n)
    bm, bn, bk = cfg.block_m or tm, cfg.block_n or tn, cfg.block_k or tk
    warps = cfg.num_warps or TRITON_DEFAULT["num_warps"]
    stages = cfg.num_stages or TRITON_DEFAULT["num_stages"]
    c = torch.empty((m, n), device=a.device, dtype=out_dtype)
    grid = (triton.cdiv(m, bm) * triton.cdiv(n, bn),)
    args = (
        a, b, a_s, b_s, c, None, m, n, k, a.stride(0), a.stride(1), b.stride(0),
        b.stride(1), c.stride(0), c.stride(1), tl.float32,
    )  # fmt: skip

    def launch() -> torch.Tensor:
        handle = mod.scaled_mm_kernel[grid](
            *args, BLOCK_SIZE_M=bm, BLOCK_SIZE_N=bn, BLOCK_SIZE_K=bk, BLOCK_SIZE_SCALE_A=bm,
            BLOCK_SIZE_SCALE_B=bn, num_warps=warps, num_stages=stages,
        )  # fmt: skip
        _common.record(
            LAST_INFO, handle, kernels=1, kernel_names=["scaled_mm_kernel"], block_m=bm,
            block_n=bn, block_k=bk, num_warps=warps, num_stages=stages, programs=grid[0],
        )  # fmt: skip
        return c

    return launch
