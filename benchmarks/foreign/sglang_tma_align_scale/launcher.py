"""SGLang's TMA alignment of fp32 group scales (python/sglang/srt/layers/moe/ep_moe/kernels.py,
v0.5.9: `_tma_align_input_scale_kernel`, from LightLLM), launched as SGLang's
`tma_align_input_scale` launches it from the DeepGEMM MoE runner's contiguous path
(`_run_contiguous_gemm` after DeepEP's normal dispatch, fp32 scales: Hopper's), once for
the received rows' scales before the gate/up GEMM and once for the down projection input's
scales before the down GEMM, so that its launch choices are knobs.

DeepGEMM's fp8 grouped GEMM on Hopper reads its left operand's scales through TMA, M-major
(column-major) with an M stride that is a multiple of 16 bytes.  The scales arrive
row-major, [rows, K / 128] fp32 (`ep_scatter`'s output scales; the per-token-group
quantization of the SiLU-and-mul output without column-major scales), so
`tma_align_input_scale` allocates a [K / 128, padded rows] buffer (rows rounded up to 4),
launches min(rows, 8192) programs and returns the buffer's transposed view [:rows] (strides
1 and padded rows).  Each program walks the rows grid-stride (row, row + programs, ...):
it loads the row's K / 128 scales (one masked block of next_pow2(K / 128) lanes,
contiguous) and stores each to its group's output row, padded rows apart.  A transpose one
source row at a time: a warp's stores land 4 x padded rows bytes apart, a 32-byte sector
for each 4-byte scale.  No arithmetic and no loop over the columns.

SGLang's launch: min(rows, 8192) programs, BLOCK_SIZE_K = next_pow2(K / 128), no num_warps
(Triton's default 4: 128 threads over 64 or 16 lanes, so each scale is loaded by 2 or 8
threads and stored by one) and no num_stages (the default 3; the kernel's sm_90 PTX is the
same at 1 to 4, so the stages are no knob).  Knobs: `h_programs` and `h_warps` for the first
launch (the hidden size's scales, 56 a row for DeepSeek-V3), `d_programs` and `d_warps` for
the second (the intermediate size's, 16 a row), None keeping SGLang's.  BLOCK_SIZE_K is no
knob: the block must hold the whole row of scales (the kernel has no column loop), and a
larger one only masks more lanes.  In SGLang the two launches are apart (the gate/up GEMM,
the SiLU-and-mul and the quantization between them); here they run back to back on one
stream.  SGLang allocates the outputs per call with torch.empty; here they are made in
`prepare` (the padding columns past the rows are never written, as in SGLang, and are
outside the returned views).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import torch
import triton

from foreign import _common

LAST_INFO: dict[str, Any] = {}
SGLANG_MAX_PROGRAMS = 8192  # grid_m = min(m, 8192)
DEFAULT_WARPS = 4  # tma_align_input_scale passes no num_warps
TMA_ALIGNMENT_BYTES = 16  # get_tma_aligned_size: the M stride a multiple of 16 bytes
GROUP = 128  # one fp32 scale per 128 columns
KERNEL_NAMES = ["_tma_align_input_scale_kernel"] * 2

Outputs = tuple[torch.Tensor, torch.Tensor]


@dataclass(frozen=True)
class TmaAlignConfig:
    h_programs: int | None = None  # None: SGLang's min(rows, 8192), the hidden scales' launch
    h_warps: int | None = None  # None: Triton's default 4 (SGLang passes none)
    d_programs: int | None = None  # None: SGLang's min(rows, 8192), the down scales' launch
    d_warps: int | None = None  # None: Triton's default 4 (SGLang passes none)


def prepare(
    cfg: TmaAlignConfig, hidden_scale: torch.Tensor, down_scale: torch.Tensor
) -> Callable[[], Outputs]:
    mod = _common.load_source("sglang_tma_align_scale")
    if hidden_scale.dim() != 2 or down_scale.dim() != 2:
        raise ValueError("tma_align_input_scale asserts 2-D scales [rows, K / 128]")
    if hidden_scale.shape[0] != down_scale.shape[0]:
        raise ValueError("both scales have one row per row of DeepGEMM's contiguous layout")
    if hidden_scale.dtype != torch.float32 or down_scale.dtype != torch.float32:
        raise ValueError("the scales must be fp32 (Hopper's; UE8M0 scales skip this kernel)")
    # tma_align_input_scale's allocations and launch choices, the hidden scales' then the
    # down scales'
    launches: list[tuple[tuple[Any, ...], tuple[int], int, int]] = []
    views: list[torch.Tensor] = []
    for x, programs, warps in (
        (hidden_scale, cfg.h_programs, cfg.h_warps),
        (down_scale, cfg.d_programs, cfg.d_warps),
    ):
        m, k = x.shape
        align = TMA_ALIGNMENT_BYTES // x.element_size()
        padded = -(-m // align) * align
        out = torch.empty((k, padded), dtype=x.dtype, device=x.device)
        args = (x, out, m, k, x.stride(0), x.stride(1), out.stride(1), out.stride(0))
        grid = (min(m, programs or SGLANG_MAX_PROGRAMS),)
        launches.append((args, grid, triton.next_power_of_2(k), warps or DEFAULT_WARPS))
        views.append(out.t()[:m])
    total = sum(grid[0] for _, grid, _, _ in launches)

    def launch() -> Outputs:
        handles = [
            mod._tma_align_input_scale_kernel[grid](*args, BLOCK_SIZE_K=block, num_warps=warps)
            for args, grid, block, warps in launches
        ]
        _common.record(
            LAST_INFO, handles[0], kernels=2, kernel_names=KERNEL_NAMES,
            h_programs=launches[0][1][0], h_warps=launches[0][3],
            d_programs=launches[1][1][0], d_warps=launches[1][3], programs=total,
        )  # fmt: skip
        return views[0], views[1]

    return launch
