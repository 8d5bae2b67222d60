"""vLLM's Triton W8A8 scaled GEMM (vllm/model_executor/layers/quantization/compressed_tensors/
triton_scaled_mm.py, v0.34.0: `scaled_mm_kernel`), launched as vLLM's `triton_scaled_mm`
launches it on CUDA (TritonInt8ScaledMMLinearKernel, chosen for compressed-tensors W8A8 int8
checkpoints with `--linear-backend triton`, the default on ROCm and XPU; on CUDA also where a
weight's sides are no multiple of 16, which CUTLASS refuses) so that its launch choices are
knobs.

Every linear layer of a W8A8 int8 model: the activations quantized per token to int8 by
vLLM's `scaled_int8_quant` (A [M, K], fp32 scales [M, 1]) times the weight quantized per
output channel (int8, fp32 scales [N, 1]), which the linear kernel keeps as the transposed
[K, N] view of the checkpoint's [N, K] rows (K contiguous, so each B tile is read down its
columns).  One program per BLOCK_SIZE_M x BLOCK_SIZE_N tile of C (row-major over the tiles:
pid // tiles_n, pid % tiles_n, no grouping) walks the whole of K in BLOCK_SIZE_K steps, an
int8 tl.dot into an int32 accumulator (s8 x s8 -> s32 on the tensor cores; fp32 for float
inputs), M, N and K masked in every step's loads; after the loop the accumulator is converted
to fp32 once and scaled by the rows' and columns' scales (BLOCK_SIZE_SCALE_A / _B: 1 for a
per-tensor scale, else the tile's rows / columns), the bias added in fp32 when there is one,
cast to C's dtype and stored masked.  No split of K.

vLLM's launch (use_heuristic, the only path its callers take): the tiles by the rows M,
rounded up to a power of two of at least 32: up to 32 rows 64 x 64 x 256 (64 x 128 x 256
where N >= 8192), up to 64 rows 64 x 64 x 256, up to 128 rows 64 x 128 x 128, above 128 x 128
x 128; Triton's default 4 warps and 3 stages (it passes none); tensor descriptors off on CUDA
(VLLM_TRITON_USE_TD unset: on only for XPU), so the pointer path, B_T passed as vLLM computes
it (the weight's transposed view) though only the descriptor path reads it.  Knobs: the three
tiles, warps and stages, None keeping vLLM's; every tile a power of two of at least 16
(tl.dot).  vLLM allocates C per call (torch.empty); here it is made once in `prepare`, so the
timed call is the kernel.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import torch

from foreign import _common

LAST_INFO: dict[str, Any] = {}
SOURCE = "vllm_int8_scaled_mm"
KERNEL = "scaled_mm_kernel"
TRITON_DEFAULT_WARPS = 4
TRITON_DEFAULT_STAGES = 3


@dataclass(frozen=True)
class ScaledMMConfig:
    block_m: int | None = None  # None: vLLM's 64 up to 128 rows, else 128
    block_n: int | None = None  # None: vLLM's 64 or 128 by M and N
    block_k: int | None = None  # None: vLLM's 256 up to 64 rows, else 128
    num_warps: int | None = None  # None: Triton's default 4 (vLLM passes none)
    num_stages: int | None = None  # None: Triton's default 3


def vllm_tiles(m: int, n: int) -> tuple[int, int, int]:
    """(BLOCK_SIZE_M, BLOCK_SIZE_N, BLOCK_SIZE_K) as `triton_scaled_mm`'s heuristic picks
    them."""
    rows = max(32, 1 << max(0, m - 1).bit_length())
    if rows <= 32:
        return (64, 64, 256) if n < 8192 else (64, 128, 256)
    if rows <= 64:
        return 64, 64, 256
    if rows <= 128:
        return 64, 128, 128
    return 128, 128, 128


def _power_of_two(v: int) -> bool:
    return v >= 16 and v & (v - 1) == 0


def prepare(
    cfg: ScaledMMConfig, a: torch.Tensor, b: torch.Tensor, scale_a: torch.Tensor,
    scale_b: torch.Tensor, out_dtype: torch.dtype, bias: torch.Tensor | None = None,
) -> Callable[[], torch.Tensor]:  # fmt: skip
    mod = _common.load_source(SOURCE)
    m, k = a.shape
    n = b.shape[1]
    if b.shape[0] != k or a.dtype != b.dtype:
        raise ValueError("a [M, K] and b [K, N] must agree in K and dtype")
    scale_a = scale_a.reshape(-1, 1) if scale_a.dim() <= 1 else scale_a
    scale_b = scale_b.reshape(-1, 1) if scale_b.dim() <= 1 else scale_b
    if scale_a.shape[0] not in (1, m) or scale_b.shape[0] not in (1, n):
        raise ValueError("scale_a must be [1 or M, 1] and scale_b [1 or N, 1]")
    vm, vn, vk = vllm_tiles(m, n)
    bm, bn, bk = cfg.block_m or vm, cfg.block_n or vn, cfg.block_k or vk
    if not all(_power_of_two(t) for t in (bm, bn, bk)):
        raise ValueError("every tile must be a power of two of at least 16 (tl.dot)")
    warps = cfg.num_warps or TRITON_DEFAULT_WARPS
    stages = cfg.num_stages or TRITON_DEFAULT_STAGES
    block_sa = 1 if scale_a.numel() == 1 else bm
    block_sb = 1 if scale_b.numel() == 1 else bn
    acc = mod.tl.float32 if a.is_floating_point() else mod.tl.int32
    b_t = b.stride(1) != 1 and b.stride(0) == 1
    out = torch.empty(m, n, dtype=out_dtype, device=a.device)
    tiles_m, tiles_n = -(-m // bm), -(-n // bn)
    grid = (tiles_m * tiles_n,)

    def launch() -> torch.Tensor:
        handle = mod.scaled_mm_kernel[grid](
            a, b, scale_a, scale_b, out, bias, m, n, k,
            a.stride(0), a.stride(1), b.stride(0), b.stride(1), out.stride(0), out.stride(1),
            acc, BLOCK_SIZE_M=bm, BLOCK_SIZE_N=bn, BLOCK_SIZE_K=bk,
            BLOCK_SIZE_SCALE_A=block_sa, BLOCK_SIZE_SCALE_B=block_sb, USE_TD=False, B_T=b_t,
            num_warps=warps, num_stages=stages,
        )  # fmt: skip
        _common.record(
            LAST_INFO, handle, kernels=1, kernel_names=[KERNEL], block_m=bm, block_n=bn,
            block_k=bk, num_warps=warps, num_stages=stages, programs=grid[0],
            k_steps=-(-k // bk), int_accumulator=not a.is_floating_point(),
        )  # fmt: skip
        return out

    return launch
