"""Unsloth's fused small-M block fp8 linear (unsloth/kernels/fp8.py, 2026.10.9:
`_w8a8_block_fp8_small_m`), launched as Unsloth's `fp8_block_small_m_linear` launches it on
an H100 so that its launch choices are knobs.

Unsloth's eager forward of a block-fp8 linear layer (a Qwen3-FP8 or DeepSeek-V3-style
checkpoint: e4m3 weights [N, K] with one fp32 scale per 128 x 128 block) for 1 to 16
activation rows, the decode step of `FastLanguageModel.for_inference` on a GPU of 100 SMs or
more (`_fp8_block_small_m_first`: this kernel first, the bf16 GEMV and the torch block
GEMM after it).  It fuses the activation quantization into the GEMM: one program per
BLOCK_SIZE_N output columns and per split of K (grid [N / BLOCK_SIZE_N, SPLIT_K]) walks its
share of the K / 128 blocks; each step loads the [16, 128] activation tile (rows past M
masked; K is never masked: Unsloth requires K % 128 == 0) in fp32, takes each row's absolute
maximum / 448 as the row's scale (1 when the row is zero), casts the scaled tile to e4m3,
loads the [128, BLOCK_SIZE_N] e4m3 weight tile (columns past N masked) and the columns'
block scales, and adds the fp8 tl.dot times both scales into an fp32 accumulator.  With one
split it stores the tile in the activations' dtype; with more, each split stores its fp32
partial into a [SPLIT_K, M, N] buffer, bumps the column tile's arrival counter with an
acq_rel atomic add, and the program that arrives last sums the partials in split order
(deterministic) and stores the output.

Unsloth's launch (`_small_m_config`, from the device's SM count, 132 on an H100 SXM):
BLOCK_SIZE_N the widest of 128, 64, 32 that still gives 2 column tiles per SM, else 16;
SPLIT_K doubled while the grid stays within 4 programs per SM and each split keeps 8 or more
K blocks, then re-derived as cdiv(K blocks, cdiv(K blocks, SPLIT_K)); 4 warps; stages by
BLOCK_SIZE_N (16: 5, 32: 4, 64: 3, 128: 4).  Fixed as Unsloth passes them: BLOCK_SIZE_M 16
(the tl.dot minimum; rows past M masked), BLOCK_SIZE_K and GROUP_N 128 (the quantization
block), enable_fp_fusion.  Knobs: block_n, split_k, num_warps, num_stages, None keeping
Unsloth's.  Unsloth allocates the output, the fp32 partials and the zeroed int32 arrival
counters per call; here the output and partials are allocated in `prepare` and the
counters' zero fill (one launch, only when split_k > 1) is in the timed call with the
kernel.  Under the CPU interpreter (tests only) the fp32 -> e4m3 cast is torch's (see
`sglang_fp8_group_quant`'s launcher).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import torch
import triton

from foreign import _common
from foreign.sglang_fp8_group_quant.launcher import interpreter_fp8_cast

LAST_INFO: dict[str, Any] = {}
SOURCE = "unsloth_fp8_small_m"
KERNEL = "_w8a8_block_fp8_small_m"
QUANT_BLOCK = 128  # the [128, 128] block_size the checkpoints use (Unsloth requires it)
BLOCK_M = 16  # Unsloth's BLOCK_SIZE_M: its _SMALL_M_MAX rows, the tl.dot minimum
H100_SMS = 132  # H100 SXM (and H200): the SM count _small_m_config reads
STAGES = {16: 5, 32: 4, 64: 3, 128: 4}  # Unsloth's _SMALL_M_STAGES by BLOCK_SIZE_N
WARPS = 4


@dataclass(frozen=True)
class Fp8SmallMConfig:
    block_n: int | None = None  # None: Unsloth's widest tile with 2 column tiles per SM
    split_k: int | None = None  # None: Unsloth's (grid within 4 programs per SM, 8+ K blocks)
    num_warps: int | None = None  # None: 4
    num_stages: int | None = None  # None: Unsloth's by block_n (16: 5, 32: 4, 64: 3, 128: 4)


def unsloth_config(n: int, k: int, sms: int = H100_SMS) -> tuple[int, int, int, int]:
    """(block_n, split_k, num_warps, num_stages) as Unsloth's `_small_m_config` picks them on
    a GPU of `sms` SMs (it depends on N and K only)."""
    block_n = 16
    for candidate in (128, 64, 32):
        if triton.cdiv(n, candidate) >= 2 * sms:
            block_n = candidate
            break
    tiles = triton.cdiv(n, block_n)
    k_blocks = triton.cdiv(k, QUANT_BLOCK)
    split_k = 1
    while tiles * split_k * 2 <= 4 * sms and k_blocks // (split_k * 2) >= 8:
        split_k *= 2
    return block_n, split_k, WARPS, STAGES[block_n]


def prepare(
    cfg: Fp8SmallMConfig, x: torch.Tensor, w: torch.Tensor, w_s: torch.Tensor
) -> Callable[[], torch.Tensor]:
    mod = _common.load_source(SOURCE)
    kernel = getattr(mod, KERNEL)
    if x.dim() != 2 or not x.is_contiguous() or not w.is_contiguous():
        raise ValueError("x [tokens, k] and w [n, k] must be contiguous matrices")
    m, k = x.shape
    n, k_w = w.shape
    if k_w != k or k % QUANT_BLOCK or not 1 <= m <= BLOCK_M:
        raise ValueError("w must share k, a multiple of 128, and x have 1 to 16 rows")
    scale_shape = (triton.cdiv(n, QUANT_BLOCK), k // QUANT_BLOCK)
    if w.dtype != torch.float8_e4m3fn or w_s.shape != scale_shape:
        raise ValueError("w must be e4m3 and w_s [n / 128, k / 128]")
    gn, gsplit, gwarps, gstages = unsloth_config(n, k)
    bn = cfg.block_n or gn
    split = cfg.split_k or gsplit
    warps = cfg.num_warps or gwarps
    stages = cfg.num_stages or (STAGES.get(bn, gstages) if cfg.block_n else gstages)
    if bn < 16 or bn & (bn - 1):
        raise ValueError("block_n must be a power of two, at least 16 (the tl.dot minimum)")
    k_blocks = k // QUANT_BLOCK
    kb_per_split = triton.cdiv(k_blocks, split)
    split = triton.cdiv(k_blocks, kb_per_split)  # as Unsloth re-derives it: no empty split
    tiles = triton.cdiv(n, bn)
    out = torch.empty((m, n), device=x.device, dtype=x.dtype)
    if split > 1:
        partial = torch.empty((split, m, n), device=x.device, dtype=torch.float32)
        arrivals = torch.empty(tiles, device=x.device, dtype=torch.int32)
    else:
        partial = arrivals = out  # unused with one split (Unsloth passes the output)
    grid = (tiles, split)

    def launch() -> torch.Tensor:
        if split > 1:
            arrivals.zero_()
        with interpreter_fp8_cast():
            handle = kernel[grid](
                x, w, out, w_s, partial, arrivals, m, n, k, k, w.stride(0), n,
                w_s.stride(0), w_s.stride(1), kb_per_split,
                GROUP_N=QUANT_BLOCK, BLOCK_SIZE_M=BLOCK_M, BLOCK_SIZE_N=bn,
                BLOCK_SIZE_K=QUANT_BLOCK, SPLIT_K=split, num_warps=warps, num_stages=stages,
                enable_fp_fusion=True,
            )  # fmt: skip
        _common.record(
            LAST_INFO, handle, kernels=2 if split > 1 else 1,
            kernel_names=(["zero fill", KERNEL] if split > 1 else [KERNEL]), block_m=BLOCK_M,
            block_n=bn, block_k=QUANT_BLOCK, split_k=split, k_blocks_per_split=kb_per_split,
            num_warps=warps, num_stages=stages, programs=tiles * split,
            metrics={"num_splits": split, "matmul_operand_bits": 8},
        )  # fmt: skip
        return out

    return launch
