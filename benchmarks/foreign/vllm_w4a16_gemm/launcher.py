"""vLLM's Triton W4A16 GEMM (vllm/model_executor/kernels/linear/mixed_precision/triton_w4a16.py,
v0.34.0: `triton_w4a16_gemm_kernel`), launched as vLLM's `_triton_w4a16_gemm_impl` launches it
on CUDA (TritonW4A16LinearKernel, chosen for compressed-tensors int4 weight-only checkpoints
with `--linear-backend triton`; the default on ROCm) so that its launch choices are knobs.

Every linear layer of a W4A16 model: the activations [M, K] times a weight stored as 4-bit
integers, eight consecutive output columns to an int32 in GPTQ's sequential order (nibble i
at bits 4 i), qweight [K, N / 8], with a scale per group of `group` input rows and output
column, scales [K / group, N], and either a constant zero point of 8 (uint4b8, symmetric) or
4-bit zero points packed like the weight, qzeros [K / group, N / 8] (uint4).  One program per
(BLOCK_M rows, BLOCK_N columns) tile walks the whole of K in BLOCK_K steps: it loads the
[BLOCK_M, BLOCK_K] activation tile and the [BLOCK_K, BLOCK_N / 8] packed weight tile, spreads
each int32 over its eight columns (three tl.interleave), shifts and masks out the nibbles,
subtracts the zero point, casts to the activations' dtype, multiplies by the step's row of
scales and accumulates a tl.dot in fp32; the tile is cast and stored once.  No split of K.

vLLM's launch on CUDA: by the rows M, 32 x 64 x 32 tiles up to 32 rows, 64 x 64 x 32 up to
64, 128 x 128 x 32 above; BLOCK_K clamped to the group size (the kernel reads one group's
scales per step); Triton's default 4 warps and 3 stages (it passes none).  The grid is
(cdiv(M, BLOCK_M), cdiv(N, BLOCK_N)).  Knobs: the three tiles, warps and stages, None keeping
vLLM's; block_n a multiple of 8 (the packed words), block_k a divisor of the group size (one
scale row per step), every tile at least 16 (tl.dot).  vLLM allocates the output with
torch.empty per call; here it is made once in `prepare`, so the timed call is the kernel.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import torch

from foreign import _common

LAST_INFO: dict[str, Any] = {}
SOURCE = "vllm_w4a16_gemm"
KERNEL = "triton_w4a16_gemm_kernel"
ZP_BIAS = 8  # uint4b8: the constant zero point when there are no packed zeros
TRITON_DEFAULT_WARPS = 4
TRITON_DEFAULT_STAGES = 3


@dataclass(frozen=True)
class W4A16GemmConfig:
    block_m: int | None = None  # None: vLLM's 32 / 64 / 128 by M
    block_n: int | None = None  # None: vLLM's 64 / 64 / 128 by M
    block_k: int | None = None  # None: vLLM's 32, clamped to the group size
    num_warps: int | None = None  # None: Triton's default 4 (vLLM passes none)
    num_stages: int | None = None  # None: Triton's default 3


def vllm_tiles(m: int, group: int) -> tuple[int, int, int]:
    """(BLOCK_M, BLOCK_N, BLOCK_K) as `_triton_w4a16_gemm_impl` picks them on CUDA."""
    if m <= 32:
        bm, bn, bk = 32, 64, 32
    elif m <= 64:
        bm, bn, bk = 64, 64, 32
    else:
        bm, bn, bk = 128, 128, 32
    return bm, bn, min(bk, group)


def prepare(
    cfg: W4A16GemmConfig, x: torch.Tensor, qweight: torch.Tensor, scales: torch.Tensor,
    qzeros: torch.Tensor | None,
) -> Callable[[], torch.Tensor]:  # fmt: skip
    mod = _common.load_source(SOURCE)
    m, k = x.shape
    n = qweight.shape[1] * 8
    group = k // scales.shape[0]
    if qweight.shape[0] != k or scales.shape != (k // group, n) or k % group:
        raise ValueError("qweight [K, N/8] and scales [K/G, N] must agree")
    if qzeros is not None and qzeros.shape != (k // group, n // 8):
        raise ValueError("qzeros must be [K/G, N/8]")
    vm, vn, vk = vllm_tiles(m, group)
    bm, bn, bk = cfg.block_m or vm, cfg.block_n or vn, cfg.block_k or vk
    if bn % 8 or group % bk or min(bm, bn, bk) < 16:
        raise ValueError(
            "block_n must be a multiple of 8, block_k divide the group size, every tile >= 16"
        )
    warps = cfg.num_warps or TRITON_DEFAULT_WARPS
    stages = cfg.num_stages or TRITON_DEFAULT_STAGES
    x = x.contiguous()
    out = torch.empty(m, n, dtype=x.dtype, device=x.device)
    has_zp = qzeros is not None
    zeros = qzeros if has_zp else qweight  # vLLM's dummy pointer when HAS_ZP is off
    grid = (-(-m // bm), -(-n // bn))

    def launch() -> torch.Tensor:
        handle = mod.triton_w4a16_gemm_kernel[grid](
            x, qweight, scales, zeros, out, m, n, k,
            x.stride(0), x.stride(1), qweight.stride(0), qweight.stride(1),
            out.stride(0), out.stride(1),
            group_size=group, HAS_ZP=has_zp, ZP_BIAS=ZP_BIAS,
            BLOCK_M=bm, BLOCK_N=bn, BLOCK_K=bk, num_warps=warps, num_stages=stages,
        )  # fmt: skip
        _common.record(
            LAST_INFO, handle, kernels=1, kernel_names=[KERNEL], block_m=bm, block_n=bn,
            block_k=bk, num_warps=warps, num_stages=stages, programs=grid[0] * grid[1],
            k_steps=-(-k // bk), zero_points=has_zp,
        )  # fmt: skip
        return out

    return launch
