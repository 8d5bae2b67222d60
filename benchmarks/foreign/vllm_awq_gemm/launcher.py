"""vLLM's AWQ int4 GEMM (vllm/model_executor/layers/quantization/awq_triton.py, v0.34.0:
`awq_gemm_kernel`), launched as vLLM's `awq_gemm_triton` launches it (the Triton AWQ path:
ROCm, or VLLM_USE_TRITON_AWQ=1) so that its launch choices are knobs.

Every linear layer of an AWQ-quantized model below 256 tokens (vLLM dequantizes and calls a
dense matmul from 256 tokens on): the activations times a weight stored as 4-bit integers,
eight to an int32 in AWQ's interleaved order, with a 4-bit zero point and an fp16 scale per
128-row group.  One program per (BLOCK_M rows, BLOCK_N columns) tile and per split of K
loads its packed weight tile, spreads each int32 over eight columns (three tl.interleave),
shifts and masks out the nibbles, subtracts the group's zeros, multiplies by its scales,
casts to fp16 and accumulates a tl.dot in the output's dtype (fp16); the SPLIT_K programs of
a tile step through K in BLOCK_K * SPLIT_K strides and each writes its own slice of a
[SPLIT_K, M, N] buffer, which torch then sums.

vLLM's launch (AWQLinearMethod.apply -> ops.awq_gemm with split_k_iters = the pack factor
8): 32 x 32 x 32 tiles, SPLIT_K 8, Triton's default 4 warps and 3 stages.  Knobs: the three
tiles, the split, warps and stages, None keeping vLLM's.  The tile along K must fit in one
quantization group (the kernel reads one row of scales and zeros per step).  vLLM allocates
the split buffer with torch.zeros per call; every program writes its whole tile, so here it
is allocated once in `prepare`, and the timed call is the kernel and torch's sum over the
splits.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import torch

from foreign import _common

LAST_INFO: dict[str, Any] = {}
VLLM_BLOCK = 32
VLLM_SPLIT_K = 8  # the pack factor, passed as split_k_iters
TRITON_DEFAULT_WARPS = 4
TRITON_DEFAULT_STAGES = 3


@dataclass(frozen=True)
class AwqGemmConfig:
    block_m: int | None = None  # None: vLLM's 32
    block_n: int | None = None  # None: vLLM's 32
    block_k: int | None = None  # None: vLLM's 32
    split_k: int | None = None  # None: vLLM's 8
    num_warps: int | None = None  # None: Triton's default 4 (vLLM passes none)
    num_stages: int | None = None  # None: Triton's default 3


def prepare(
    cfg: AwqGemmConfig, x: torch.Tensor, qweight: torch.Tensor, scales: torch.Tensor,
    qzeros: torch.Tensor,
) -> Callable[[], torch.Tensor]:  # fmt: skip
    mod = _common.load_source("vllm_awq_gemm")
    m, k = x.shape
    n = qweight.shape[1] * 8
    group = k // qzeros.shape[0]
    if qweight.shape[0] != k or scales.shape != (k // group, n) or qzeros.shape[1] != n // 8:
        raise ValueError("qweight [K, N/8], scales [K/G, N] and qzeros [K/G, N/8] must agree")
    bm = cfg.block_m or VLLM_BLOCK
    bn = cfg.block_n or VLLM_BLOCK
    bk = cfg.block_k or VLLM_BLOCK
    split = cfg.split_k or VLLM_SPLIT_K
    if group % bk or bn % 8:
        raise ValueError("block_k must divide the group size and block_n be a multiple of 8")
    warps = cfg.num_warps or TRITON_DEFAULT_WARPS
    stages = cfg.num_stages or TRITON_DEFAULT_STAGES
    x = x.contiguous()
    parts = torch.empty(split, m, n, dtype=scales.dtype, device=x.device)
    grid = (-(-m // bm) * -(-n // bn), split)

    def launch() -> torch.Tensor:
        handle = mod.awq_gemm_kernel[grid](
            x, qweight, parts, qzeros, scales, m, n, k, group,
            BLOCK_SIZE_M=bm, BLOCK_SIZE_N=bn, BLOCK_SIZE_K=bk, SPLIT_K=split,
            num_warps=warps, num_stages=stages,
        )  # fmt: skip
        out = parts.sum(0)
        _common.record(
            LAST_INFO, handle, kernels=2, kernel_names=["awq_gemm_kernel", "split_k_sum"],
            block_m=bm, block_n=bn, block_k=bk, split_k=split, num_warps=warps,
            num_stages=stages, programs=grid[0] * grid[1],
        )  # fmt: skip
        return out

    return launch
