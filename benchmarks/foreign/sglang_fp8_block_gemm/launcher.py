"""SGLang's block-wise fp8 W8A8 GEMM (python/sglang/srt/layers/quantization/fp8_kernel.py,
v0.5.9: `_w8a8_block_fp8_matmul`), launched by our copy of SGLang's
`w8a8_block_fp8_matmul_triton` so that its launch choices are knobs.

C = A B^T with A [M, K] e4m3 quantized per token in groups of 128 columns (scales As [M,
K / 128]) and B [N, K] e4m3 quantized in 128 x 128 blocks (scales Bs [N / 128, K / 128]).
One program per BLOCK_SIZE_M x BLOCK_SIZE_N tile of C, ordered in GROUP_SIZE_M groups of
row blocks, loops over K in BLOCK_SIZE_K steps: an fp8 tl.dot (wgmma on sm_90) per step,
scaled by the step's A and B scales into an fp32 accumulator, then one cast to C's dtype.

SGLang's choice when no tuned table matches (N, K, the device; v0.5.9's H200 tables cover
DeepSeek-V3's widths, not Qwen3-32B's): BLOCK_SIZE_M 64, BLOCK_SIZE_N and BLOCK_SIZE_K the
quantization block (128, 128), GROUP_SIZE_M 32, 4 warps, 3 stages; masking only where K is
not a multiple of BLOCK_SIZE_K.  Knobs: block_m, block_n, group_m, num_warps, num_stages,
None keeping SGLang's.  BLOCK_SIZE_K is no knob: the kernel loads one scale per step and
advances the scales by BLOCK_SIZE_K / 128 groups, so only 128 (the quantization group) is
correct.  SGLang allocates C per call; here it is allocated in `prepare`.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import torch
import triton

from foreign import _common

LAST_INFO: dict[str, Any] = {}
QUANT_BLOCK = 128  # the [128, 128] block_size SGLang's block-fp8 checkpoints use
SGLANG_DEFAULT = {"BLOCK_SIZE_M": 64, "GROUP_SIZE_M": 32, "num_warps": 4, "num_stages": 3}


@dataclass(frozen=True)
class BlockGemmConfig:
    block_m: int | None = None  # None: SGLang's default 64
    block_n: int | None = None  # None: the quantization block, 128
    group_m: int | None = None  # None: 32
    num_warps: int | None = None  # None: 4
    num_stages: int | None = None  # None: 3


Fp8BlockGemmConfig = BlockGemmConfig


def prepare(
    cfg: BlockGemmConfig, a: torch.Tensor, a_s: torch.Tensor, b: torch.Tensor,
    b_s: torch.Tensor, out_dtype: torch.dtype,
) -> Callable[[], torch.Tensor]:  # fmt: skip
    return block_gemm_prepare(
        _common.load_source("sglang_fp8_kernel"), "_w8a8_block_fp8_matmul", LAST_INFO,
        cfg, a, a_s, b, b_s, out_dtype, masking_flag=True,
    )  # fmt: skip


def block_gemm_prepare(
    mod: Any, kernel_name: str, info: dict[str, Any], cfg: BlockGemmConfig, a: torch.Tensor,
    a_s: torch.Tensor, b: torch.Tensor, b_s: torch.Tensor, out_dtype: torch.dtype, *,
    masking_flag: bool,
) -> Callable[[], torch.Tensor]:  # fmt: skip
    """The launch of one of SGLang's block-quantized W8A8 GEMMs (`kernel_name` in `mod`; the
    fp8 and the int8 one take the same arguments, and the fp8 one a `needs_masking` flag
    besides, `masking_flag`), its choices recorded into `info`."""
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
    flags = {"needs_masking": k % bk != 0} if masking_flag else {}
    kernel = getattr(mod, kernel_name)

    def launch() -> torch.Tensor:
        handle = kernel[grid](
            *args, BLOCK_SIZE_M=bm, BLOCK_SIZE_N=bn, BLOCK_SIZE_K=bk, GROUP_SIZE_M=gm,
            num_warps=warps, num_stages=stages, **flags,
        )  # fmt: skip
        _common.record(
            info, handle, kernels=1, kernel_names=[kernel_name], block_m=bm, block_n=bn,
            block_k=bk, group_m=gm, num_warps=warps, num_stages=stages, programs=grid[0],
        )  # fmt: skip
        return c

    return launch
