"""vLLM's fused SiLU-and-mul with per-group fp8 quantization into column-major scales
(vllm/model_executor/layers/quantization/utils/fp8_utils.py, v0.34.0:
`_silu_mul_per_token_group_quant_fp8_colmajor`), launched as vLLM's
`silu_mul_per_token_group_quant_fp8_colmajor` launches it for `DeepGemmExperts` on Hopper,
so that its launch choices are knobs.

On SM90 `DeepGemmExperts.apply` lays each local expert's rows out in DeepGEMM's prefix-sum
layout (segments aligned to 128 rows, `expert_ends` their ends) and, for a SiLU MoE, passes
the layout to this kernel between the two grouped GEMMs (`_act_mul_quant`, "Hopper /
non-E8M0": DeepGEMM's FLOAT32_CEIL_UE8M0 scale format).  The grid is (row programs, column
groups, experts): the program (i, j, e) starts at its expert's segment start plus i x
BLOCK_M rows, loads the [BLOCK_M, 128] gate tile and the up tile inter columns on (rows
past the segment's end masked), computes silu(gate) in fp32 rounded to the input
dtype times up rounded to the dtype, takes each row's absolute maximum (at least 1e-10),
the scale absmax / 448 rounded up to a power of two (log2, ceil, exp2), stores the tile
clamped and cast to e4m3 and the BLOCK_M scales into column j of the column-major scale
buffer, then steps row programs x BLOCK_M rows on, as many times as the segment needs.
No tl.dot; an expert with no rows returns at once; padding rows are never read or written.

vLLM's launch: BLOCK_M 8, BLOCK_N = the group (128); grid (min(cdiv(M_sum, 8 x experts),
max(1, cdiv(8192, groups x experts))), inter / 128, experts); no num_warps or num_stages
(Triton's defaults, 4 and 3); UE8M0 scales on (DeepGEMM's E8M0 default on Hopper), no clamp,
alpha 1 and beta 0 (SiLU).  No autotune or table.  Knobs: the rows per tile, the program
budget, the warps and the stages, None keeping vLLM's; a tile of more than 256 fp32 values
a thread is refused (MAX_PER_THREAD), and so is a tile height that does not divide the
segment alignment and the workspace rows (vLLM asserts both).  The fp8 rows (a view of
vLLM's workspace) and the column-major scales (`torch.empty((groups, M_sum)).T` on every
call) are made in `prepare` and zero-filled there once (the kernel never writes outside the
segments, so the check compares every row).  Under the CPU interpreter (tests only) the
fp32 -> e4m3 cast is done by torch, as for `sglang_fp8_group_quant`.
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
FP8 = torch.float8_e4m3fn
EPS = 1e-10
VLLM_BLOCK_M = 8
VLLM_MAX_CTAS = 8192  # the expert grid's program budget in silu_mul_..._colmajor
TRITON_WARPS = 4  # vLLM passes no num_warps: Triton's default
TRITON_STAGES = 3  # nor num_stages
USE_UE8M0 = True  # DeepGemmQuantScaleFMT.FLOAT32_CEIL_UE8M0 on Hopper
# A [BLOCK_M, group] fp32 tile over more than 256 values a thread spills; vLLM's holds 8
# (8 x 128 over 4 warps).
MAX_PER_THREAD = 256


@dataclass(frozen=True)
class SiluMulColmajorQuantConfig:
    block_m: int | None = None  # None: vLLM's 8
    max_ctas: int | None = None  # None: vLLM's 8192
    num_warps: int | None = None  # None: Triton's 4
    num_stages: int | None = None  # None: Triton's 3


def vllm_grid(
    rows: int, groups: int, experts: int, block_m: int, max_ctas: int
) -> tuple[int, int, int]:
    """The expert grid as `silu_mul_per_token_group_quant_fp8_colmajor` sizes it."""
    grid_m = min(
        triton.cdiv(rows, block_m * experts), max(1, triton.cdiv(max_ctas, groups * experts))
    )
    return (grid_m, groups, experts)


def live_programs(ends: list[int], align: int, block_m: int, grid_m: int) -> int:
    """Row programs that find rows, over all experts, for one column group: program i of
    expert e starts i x block_m rows into e's segment (aligned up from the previous end) and
    returns at once when that is past the segment's end."""
    live, previous = 0, 0
    for end in ends:
        start = -(-previous // align) * align
        live += min(grid_m, -(-max(end - start, 0) // block_m))
        previous = end
    return live


def prepare(
    cfg: SiluMulColmajorQuantConfig, x: torch.Tensor, ends: torch.Tensor, group: int,
    align: int,
) -> Callable[[], tuple[torch.Tensor, torch.Tensor]]:  # fmt: skip
    mod = _common.load_source("vllm_silu_mul_colmajor_quant")
    if x.dim() != 2 or not x.is_contiguous():
        raise ValueError("x must be a contiguous [M_sum, 2 * inter] workspace")
    rows, width = x.shape
    if rows % group or width % (2 * group):
        raise ValueError("M_sum a multiple of the group, 2 * inter of two groups (vLLM asserts)")
    if ends.dim() != 1 or ends.dtype != torch.int32 or not ends.is_contiguous():
        raise ValueError("expert_ends must be a contiguous int32 vector (vLLM asserts)")
    block_m = cfg.block_m or VLLM_BLOCK_M
    max_ctas = cfg.max_ctas or VLLM_MAX_CTAS
    warps = cfg.num_warps or TRITON_WARPS
    stages = cfg.num_stages or TRITON_STAGES
    if rows % block_m or align % block_m:
        raise ValueError(
            f"{block_m}-row tiles must divide the workspace rows ({rows}) and the segment "
            f"alignment ({align}) (vLLM asserts both)"
        )
    if block_m * group > MAX_PER_THREAD * 32 * warps:
        raise ValueError(
            f"a {block_m} x {group} tile over {warps} warps holds more than {MAX_PER_THREAD} "
            "fp32 values per thread"
        )
    inter = width // 2
    experts = ends.numel()
    grid = vllm_grid(rows, inter // group, experts, block_m, max_ctas)
    programs = grid[0] * grid[1] * grid[2]
    live = live_programs(ends.tolist(), align, block_m, grid[0]) * grid[1]
    info = torch.finfo(FP8)
    out = torch.zeros((rows, inter), device=x.device, dtype=FP8)
    scales = torch.zeros((inter // group, rows), device=x.device, dtype=torch.float32).t()

    def launch() -> tuple[torch.Tensor, torch.Tensor]:
        with interpreter_fp8_cast():
            handle = mod._silu_mul_per_token_group_quant_fp8_colmajor[grid](
                x, out, scales, ends, rows, width, scales.stride(-1), EPS, 0.0, 1.0, 0.0,
                -info.max, info.max, USE_UE8M0, False, group, block_m, group, align,
                num_warps=warps, num_stages=stages,
            )  # fmt: skip
        _common.record(
            LAST_INFO, handle, kernels=1,
            kernel_names=["_silu_mul_per_token_group_quant_fp8_colmajor"],
            block_m=block_m, block_n=group, max_ctas=max_ctas, num_warps=warps,
            num_stages=stages, grid_m=grid[0], programs=programs,
            metrics={"live_program_fraction": live / programs}, use_ue8m0=USE_UE8M0,
        )  # fmt: skip
        return out, scales

    return launch
