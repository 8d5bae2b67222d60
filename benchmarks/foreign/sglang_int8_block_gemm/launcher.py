"""SGLang's block-wise int8 W8A8 GEMM (python/sglang/srt/layers/quantization/int8_kernel.py,
v0.5.9: `_w8a8_block_int8_matmul`), launched as SGLang's `w8a8_block_int8_matmul` launches it,
so that its launch choices are knobs.

C = A B^T with A [M, K] int8 quantized per token in groups of 128 columns (scales As [M,
K / 128]) and B [N, K] int8 quantized in 128 x 128 blocks (scales Bs [N / 128, K / 128]).
One program per BLOCK_SIZE_M x BLOCK_SIZE_N tile of C, ordered in GROUP_SIZE_M groups of
row blocks, loops over K in BLOCK_SIZE_K steps: an int8 tl.dot (an s8 x s8 -> s32 product on
the tensor cores) per step, converted to fp32 and scaled by the step's A and B scales into an
fp32 accumulator, then one cast to C's dtype.  Rows and columns past M and N wrap (offsets
modulo M and N, stores masked); K is masked in every step's loads.

SGLang's choice when no tuned table matches (v0.5.9 ships int8 tables for A100 and A800
only, so on Hopper always): BLOCK_SIZE_M 64, BLOCK_SIZE_N and BLOCK_SIZE_K the quantization
block (128, 128), GROUP_SIZE_M 32, 4 warps, 3 stages.  Knobs: block_m, block_n, group_m,
num_warps, num_stages, None keeping SGLang's.  BLOCK_SIZE_K is no knob: the kernel loads one
scale per step at k_start // 128, so only 128 (the quantization group) is correct.  SGLang
allocates C per call; here it is allocated in `prepare`.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import torch
import triton

from foreign import _common

LAST_INFO: dict[str, Any] = {}
QUANT_BLOCK = 128  # the [128, 128] block_size of SGLang's block-INT8 checkpoints
SGLANG_DEFAULT = {"BLOCK_SIZE_M": 64, "GROUP_SIZE_M": 32, "num_warps": 4, "num_stages": 3}


@dataclass(frozen=True)
class Int8BlockGemmConfig:
    block_m: int | None = None  # None: SGLang's default 64
    block_n: int | None = None  # None: the quantization block, 128
    group_m: int | None = None  # None: 32
    num_warps: int | None = None  # None: 4
    num_stages: int | None = None  # None: 3


def prepare(
    cfg: Int8BlockGemmConfig, a: torch.Tensor, a_s: torch.Tensor, b: torch.Tensor,
    b_s: torch.Tensor, out_dtype: torch.dtype,
) -> Callable[[], torch.Tensor]:  # fmt: skip
    mod = _common.load_source("sglang_int8_block_gemm")
    m, k = a.shape
    n, k_b = b.shape
    if k_b != k or not a.is_contiguous() or not b.is_contiguous():
        raise ValueError("A [M, K] and B [N, K] must be contiguous and share K")
    if a_s.shape != (m, triton.cdiv(k, QUANT_BLOCK)) or b_s.shape != (
        triton.cdiv(n, QUANT_BLOCK),
        triton.cdiv(k, QUANT_BLOCK),
    ):
        raise ValueError("As must be [M, K / 128] and Bs [N / 128, K / 128]")
    bm = cfg.block_m or SGLANG_DEFAULT["BLOCK_SIZE_M"]
    bn = cfg.block_n or QUANT_BLOCK
    bk = QUANT_BLOCK
    gm = cfg.group_m or SGLANG_DEFAULT["GROUP_SIZE_M"]
    warps = cfg.num_warps or SGLANG_DEFAULT["num_warps"]
    stages = cfg.num_stages or SGLANG_DEFAULT["num_stages"]
    c = torch.empty((m, n), device=a.device, dtype=out_dtype)
    grid = (triton.cdiv(m, bm) * triton.cdiv(n, bn),)
    args = (
        a, b, c, a_s, b_s, m, n, k, QUANT_BLOCK, QUANT_BLOCK,
        a.stride(-2), a.stride(-1), b.stride(1), b.stride(0), c.stride(-2), c.stride(-1),
        a_s.stride(-2), a_s.stride(-1), b_s.stride(1), b_s.stride(0),
    )  # fmt: skip

    def launch() -> torch.Tensor:
        handle = mod._w8a8_block_int8_matmul[grid](
            *args, BLOCK_SIZE_M=bm, BLOCK_SIZE_N=bn, BLOCK_SIZE_K=bk, GROUP_SIZE_M=gm,
            num_warps=warps, num_stages=stages,
        )  # fmt: skip
        _common.record(
            LAST_INFO, handle, kernels=1, kernel_names=["_w8a8_block_int8_matmul"],
            block_m=bm, block_n=bn, block_k=bk, group_m=gm, num_warps=warps,
            num_stages=stages, programs=grid[0],
        )  # fmt: skip
        return c

    return launch
