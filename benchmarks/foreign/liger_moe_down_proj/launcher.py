"""Liger-Kernel's fused MoE down-projection (liger_kernel.ops.fused_moe_kernels, 0.8.5): the
grouped GEMM `_fused_down_proj_kernel`, launched by our copy of that step of
`LigerFusedMoEFunction.forward` so that its launch choices are knobs.

Liger first sorts the (token, expert) assignments by expert with three routing kernels of
its own (`compute_routing_metadata`: a histogram, prefix sums, a scatter, and one host
sync for the number of row tiles), giving each BLOCK_M-row tile one expert.  The up
projection then leaves silu(gate) * up in that sorted order, one contiguous row per
assignment.  The down GEMM's grid is (row tiles, hidden / BLOCK_N): a program reads its
tile's expert and first row, walks the intermediate size in BLOCK_K steps, loading a
[BLOCK_M, BLOCK_K] tile of those contiguous activation rows (rows past the expert's end
masked) and a [BLOCK_N, BLOCK_K] tile of the expert's down weight, one tl.dot (the weight
tile transposed) into an fp32 accumulator, and stores Y's [BLOCK_M, BLOCK_N] tile in the
model dtype, still one row per assignment in sorted order (Liger's token aggregation, a
separate kernel, weights and sums them per token afterwards).  Liger's choices: BLOCK_M 64
(a module constant, fixed outside the autotuner because the routing tiles depend on it),
and for the rest an autotuner over 32 configurations keyed on (hidden, intermediate) --
or, with LIGER_FUSED_MOE_AUTOTUNE=0, its one pinned configuration: BLOCK_N 128, BLOCK_K
64, 8 warps, 2 stages.  That pinned configuration is Liger's here (None keeps it); the
autotuner is bypassed (its `.fn`, the plain kernel, is launched), since tuning would
compile 32 tl.dot kernels per run.  Knobs: `block_m`, `block_n`, `block_k`, `num_warps`,
`num_stages`.

The routing metadata and the output buffer are set-up per batch and happen in `prepare`;
the timed call is the GEMM launch alone.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import torch
import triton

from foreign import _common
from foreign.liger_moe_up_proj import launcher as _up
from kbopt.bench.interpreter import fix_scalar_index_if_interpreting

LAST_INFO: dict[str, Any] = {}
# liger's BLOCK_M_TOKEN and the configuration it pins with LIGER_FUSED_MOE_AUTOTUNE=0, the
# same for both of its MoE GEMMs
LIGER_LAUNCH = _up.LIGER_LAUNCH


@dataclass(frozen=True)
class LigerMoeDownProjConfig:
    block_m: int | None = None  # None: liger's 64 (rows of a routing tile)
    block_n: int | None = None  # None: liger's pinned 128
    block_k: int | None = None  # None: liger's pinned 64
    num_warps: int | None = None  # None: liger's pinned 8
    num_stages: int | None = None  # None: liger's pinned 2


def prepare(
    cfg: LigerMoeDownProjConfig, act: torch.Tensor, down: torch.Tensor, topk: torch.Tensor
) -> Callable[[], torch.Tensor]:
    fix_scalar_index_if_interpreting()
    from liger_kernel.ops import fused_moe as liger
    from liger_kernel.ops import fused_moe_kernels as kernels

    if act.dim() != 2 or down.dim() != 3 or topk.dim() != 2:
        raise ValueError("act [tokens * k, inter], down [experts, hidden, inter], topk [tokens, k]")
    if not (act.is_contiguous() and down.is_contiguous() and topk.is_contiguous()):
        raise ValueError("act, down and topk must be contiguous (liger makes them so per call)")
    experts, hidden, inter = down.shape
    if act.shape != (topk.numel(), inter):
        raise ValueError("act must hold one row of width inter per (token, expert) assignment")
    block_m, block_n, block_k = (_up.pick(cfg, n) for n in ("block_m", "block_n", "block_k"))
    warps, stages = _up.pick(cfg, "num_warps"), _up.pick(cfg, "num_stages")
    with torch.no_grad():
        _, expert_start, _, _, _, tile_row_start, tile_expert = liger.compute_routing_metadata(
            topk, experts, block_m_token=block_m
        )
    y = torch.empty(act.shape[0], hidden, dtype=act.dtype, device=act.device)
    grid = (tile_row_start.shape[0], triton.cdiv(hidden, block_n))
    kernel = kernels._fused_down_proj_kernel.fn  # the plain kernel under the autotuner

    def launch() -> torch.Tensor:
        handle = kernel[grid](
            act, down, expert_start, tile_row_start, tile_expert, y,
            H_dim=hidden, I_dim=inter, stride_post_TK=act.stride(0),
            stride_post_I=act.stride(1), stride_w_E=down.stride(0),
            stride_w_H=down.stride(1), stride_w_I=down.stride(2), stride_Y_TK=y.stride(0),
            stride_Y_H=y.stride(1), BLOCK_M=block_m, BLOCK_N=block_n, BLOCK_K=block_k,
            num_warps=warps, num_stages=stages,
        )  # fmt: skip
        _common.record(
            LAST_INFO, handle, kernels=1, kernel_names=["_fused_down_proj_kernel"],
            block_m=block_m, block_n=block_n, block_k=block_k, num_warps=warps,
            num_stages=stages, programs=grid[0] * grid[1],
        )  # fmt: skip
        return y

    return launch
