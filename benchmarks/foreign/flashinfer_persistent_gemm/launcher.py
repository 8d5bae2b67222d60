"""FlashInfer's SM-bounded persistent GEMM (flashinfer/triton/kernels/sm_constraint_gemm.py,
v0.7.4: `gemm_kernel_persistent` with its `_compute_pid` tile-order helper), launched as
FlashInfer's `gemm_persistent` (flashinfer/triton/sm_constraint_gemm.py) launches it, so that
its launch choices are knobs.

C = alpha (A @ B) + beta C for A [M, K] and B [K, N] (any strides: the caller's
`weight.t()` view of a [N, K] projection weight, K-contiguous columns), with a bound on the
SMs the GEMM may occupy (`num_sms`, the caller's budget, at most the device's SMs), so that
a kernel overlapped with it on another stream keeps the rest.  A persistent grid of
min(num_sms, tiles) programs, each walking the output tiles tile_id = pid, pid + NUM_SMS,
... (`tl.range(..., flatten=True)`; GROUP_SIZE_M row tiles swizzled together by
`_compute_pid`), each tile a full K loop of BLOCK_SIZE_K-deep tl.dot steps into an fp32
accumulator.  Row and column indices past M and N are clamped to 0 (unmasked, duplicate
loads), K is masked in every load.  The epilogue casts the accumulator to C's dtype, loads
the C tile (masked) and stores fma(c, alpha, beta C) in C's dtype: the C tile is read even
at beta 0.

FlashInfer's launch: `@triton.autotune` over one configuration (matmul_get_configs: 128 x
128 x 64 tiles, GROUP_SIZE_M 8, 3 stages, 4 warps, every dtype and shape), keyed on M, N and
K; NUM_SMS (a constexpr) is min(device SMs, num_sms), the device's SMs when the caller
passes none; alpha 1, beta 0 and the output allocated with torch.empty per call (an fp8
input would give bf16, not used here).  Knobs: block_m, block_n, block_k, group_m,
num_warps, num_stages, None keeping FlashInfer's.  The SM budget is the problem's, not a
knob: the grid never exceeds it.  The output is allocated once in `prepare`, zero-filled
there (FlashInfer's torch.empty could hold NaNs, which beta 0 times the C load would
keep); every launch overwrites it.  The launch records the tl.dot operands' width.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import torch

from foreign import _common

LAST_INFO: dict[str, Any] = {}
SOURCE = "flashinfer_persistent_gemm"
KERNEL = "gemm_kernel_persistent"
H100_SMS = 132  # the device's SMs on a machine without CUDA (the interpreter)

# FlashInfer's matmul_get_configs(): its autotuner's only configuration
FLASHINFER_CONFIG = {
    "BLOCK_SIZE_M": 128,
    "BLOCK_SIZE_N": 128,
    "BLOCK_SIZE_K": 64,
    "GROUP_SIZE_M": 8,
}
FLASHINFER_WARPS = 4
FLASHINFER_STAGES = 3


@dataclass(frozen=True)
class PersistentGemmConfig:
    block_m: int | None = None  # None: FlashInfer's 128 (rows of a tile)
    block_n: int | None = None  # None: FlashInfer's 128 (columns of a tile)
    block_k: int | None = None  # None: FlashInfer's 64 (depth of a tl.dot step)
    group_m: int | None = None  # None: FlashInfer's 8 (row tiles swizzled together)
    num_warps: int | None = None  # None: FlashInfer's 4
    num_stages: int | None = None  # None: FlashInfer's 3


def _cdiv(a: int, b: int) -> int:
    return -(-a // b)


def device_sms(device: torch.device) -> int:
    if device.type == "cuda":
        return int(torch.cuda.get_device_properties(device).multi_processor_count)
    return H100_SMS


def prepare(
    cfg: PersistentGemmConfig, x: torch.Tensor, w_t: torch.Tensor, sm_budget: int
) -> Callable[[], torch.Tensor]:
    mod = _common.load_source(SOURCE)
    if x.dtype != w_t.dtype or x.dim() != 2 or w_t.dim() != 2 or x.shape[1] != w_t.shape[0]:
        raise ValueError("x [M, K] and w_t [K, N] must share the dtype and K")
    if sm_budget < 1:
        raise ValueError("the SM budget must be at least 1")
    m, k = x.shape
    n = w_t.shape[1]
    bm, bn, bk, gm, warps, stages = _common.gemm_tiles(
        cfg, FLASHINFER_CONFIG, FLASHINFER_WARPS, FLASHINFER_STAGES
    )
    # gemm_persistent: num_sms = NUM_SMS if num_sms is None else min(NUM_SMS, num_sms)
    num_sms = min(device_sms(x.device), int(sm_budget))
    tiles = _cdiv(m, bm) * _cdiv(n, bn)
    grid = (min(num_sms, tiles),)
    c = torch.zeros((m, n), device=x.device, dtype=x.dtype)

    def launch() -> torch.Tensor:
        with _common.interpreter_float_scalars():
            handle = mod.gemm_kernel_persistent[grid](
                x, w_t, c, m, n, k,
                x.stride(0), x.stride(1), w_t.stride(0), w_t.stride(1),
                c.stride(0), c.stride(1),
                alpha=1.0, beta=0.0,
                BLOCK_SIZE_M=bm, BLOCK_SIZE_N=bn, BLOCK_SIZE_K=bk, GROUP_SIZE_M=gm,
                NUM_SMS=num_sms, num_warps=warps, num_stages=stages,
            )  # fmt: skip
        _common.record(
            LAST_INFO, handle, kernels=1, kernel_names=[KERNEL], block_m=bm, block_n=bn,
            block_k=bk, group_m=gm, num_warps=warps, num_stages=stages, programs=grid[0],
            sm_budget=num_sms, tiles=tiles, tiles_per_program=_cdiv(tiles, grid[0]),
            k_steps=_cdiv(k, bk),
            metrics={"matmul_operand_bits": 8 * x.element_size()},
        )  # fmt: skip
        return c

    return launch
