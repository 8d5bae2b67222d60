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
from typing import Any

import torch

from foreign import _common

# The same launch as the fp8 block GEMM's (tiles, grouping, arguments), without its
# needs_masking flag: the int8 kernel masks K in every step.
from foreign.sglang_fp8_block_gemm.launcher import BlockGemmConfig, block_gemm_prepare

LAST_INFO: dict[str, Any] = {}
Int8BlockGemmConfig = BlockGemmConfig


def prepare(
    cfg: BlockGemmConfig, a: torch.Tensor, a_s: torch.Tensor, b: torch.Tensor,
    b_s: torch.Tensor, out_dtype: torch.dtype,
) -> Callable[[], torch.Tensor]:  # fmt: skip
    return block_gemm_prepare(
        _common.load_source("sglang_int8_block_gemm"), "_w8a8_block_int8_matmul", LAST_INFO,
        cfg, a, a_s, b, b_s, out_dtype, masking_flag=False,
    )  # fmt: skip
