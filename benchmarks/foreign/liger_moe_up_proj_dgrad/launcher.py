"""Liger-Kernel's fused MoE input gradient through the gate/up projection (liger_kernel.
ops.fused_moe_kernels, 0.8.5: `_moe_bwd_dX_expanded_kernel`), launched by our copy of that
step of `LigerFusedMoEFunction.backward` so that its launch choices are knobs.

After `_moe_bwd_down_proj_kernel` has left SwiGLU's gradient d_pre_act [tokens * k,
2 * inter] (d(gate) in the first inter columns, d(up) in the rest) in the expert-sorted
order of the forward's routing, the backward computes each assignment row's gradient of
the layer input, dx_expanded = d_gate @ W_gate[e] + d_up @ W_up[e], with the expert's
stacked gate/up weight [2 * inter, hidden] read untransposed (its rows are the reduction):
a grouped GEMM whose reduction is the intermediate size and whose output is the model
width, one row per assignment in sorted order; Liger's token aggregation (an unweighted
gather-sum of each token's k rows, a separate kernel) follows and is not part of it.

The grid is the forward's: (routing tiles, hidden / BLOCK_N), one expert per BLOCK_M-row
tile (Liger's `BLOCK_M_TOKEN`, 64: the routing metadata's tile_row_start and tile_expert
are made for it).  A program reads its tile's expert, first row and the expert's end, then
walks the intermediate size BLOCK_K at a time; each step loads four tiles: the rows'
[BLOCK_M, BLOCK_K] d(gate) slice and the expert's [BLOCK_K, BLOCK_N] gate-weight slice
(hidden-contiguous), one tl.dot into an fp32 accumulator of its own, then the d(up) slice
inter columns further on and the up-weight slice inter rows further down, a second tl.dot
into a second accumulator (Liger keeps two live on purpose: one shared accumulator
miscompiled on sm_103); rows past the expert's end and columns past inter masked to zero;
the loop is a `tl.range`, software-pipelined by num_stages.  The two accumulators are
added and the [BLOCK_M, BLOCK_N] tile stored once in the model dtype: no atomics, no
epilogue work, each output row written by exactly one program per column tile.  Each
column slice of an expert's gate/up weight is read once per routing tile of that expert,
and each tile's d_pre_act rows once per column program.

Liger's choices: BLOCK_M 64 (a module constant, outside the autotuner because the routing
tiles depend on it), and for the rest the autotuner its forward GEMMs share, over 32
configurations (BLOCK_N of 64 or 128, BLOCK_K of 32 or 64, 4 or 8 warps, 2 to 5 stages)
keyed on (hidden, inter) with no table of tuned values -- or, with
LIGER_FUSED_MOE_AUTOTUNE=0 (its escape hatch for the autotuner's memory use), one pinned
configuration: BLOCK_N 128, BLOCK_K 64, 8 warps, 2 stages.  That pinned configuration is
Liger's here (None keeps it), as in liger_moe_up_proj, liger_moe_down_proj and
liger_moe_down_proj_bwd; the autotuner is bypassed (its `.fn`, the plain kernel, is
launched).  Knobs: `block_m`, `block_n`, `block_k`, `num_warps`, `num_stages`.

Set-up in `prepare`, outside the timed call: the routing metadata the forward saved
(Liger's own `compute_routing_metadata`, three Triton kernels and a host sync, at the
block_m the launch uses) and dx_expanded (Liger's torch.empty: the kernel writes every
assignment row).  The timed call is the kernel alone: one launch.
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
# liger's BLOCK_M_TOKEN and the configuration its GEMM autotuner list pins with
# LIGER_FUSED_MOE_AUTOTUNE=0, the same for its forward GEMMs and this backward one
LIGER_LAUNCH = _up.LIGER_LAUNCH


@dataclass(frozen=True)
class LigerMoeUpProjDgradConfig:
    block_m: int | None = None  # None: liger's 64 (rows of a routing tile)
    block_n: int | None = None  # None: liger's pinned 128 (hidden columns per program)
    block_k: int | None = None  # None: liger's pinned 64 (inter depth per tl.dot step)
    num_warps: int | None = None  # None: liger's pinned 8
    num_stages: int | None = None  # None: liger's pinned 2


def prepare(
    cfg: LigerMoeUpProjDgradConfig, d_pre_act: torch.Tensor, gate_up: torch.Tensor,
    topk: torch.Tensor,
) -> Callable[[], torch.Tensor]:  # fmt: skip
    fix_scalar_index_if_interpreting()
    from liger_kernel.ops import fused_moe as liger
    from liger_kernel.ops import fused_moe_kernels as kernels

    if d_pre_act.dim() != 2 or gate_up.dim() != 3 or topk.dim() != 2:
        raise ValueError(
            "d_pre_act [tokens * k, 2 * inter], gate_up [experts, 2 * inter, hidden], "
            "topk [tokens, k]"
        )
    if not all(t.is_contiguous() for t in (d_pre_act, gate_up, topk)):
        raise ValueError("every input must be contiguous (liger makes them so per call)")
    experts, two_inter, hidden = gate_up.shape
    if two_inter % 2:
        raise ValueError("gate_up must stack a gate and an up weight of inter rows each")
    inter = two_inter // 2
    if d_pre_act.shape != (topk.numel(), two_inter):
        raise ValueError("d_pre_act must hold one row of width 2 * inter per assignment")
    knob = {f: _up.pick(cfg, f) for f in LIGER_LAUNCH}
    block_m, block_n, block_k = knob["block_m"], knob["block_n"], knob["block_k"]
    with torch.no_grad():
        _, expert_start, _, _, _, tile_row_start, tile_expert = liger.compute_routing_metadata(
            topk, experts, block_m_token=block_m
        )
    dx_expanded = torch.empty(
        d_pre_act.shape[0], hidden, dtype=d_pre_act.dtype, device=d_pre_act.device
    )
    grid = (tile_row_start.shape[0], triton.cdiv(hidden, block_n))
    kernel = kernels._moe_bwd_dX_expanded_kernel.fn  # the plain kernel under the autotuner

    def launch() -> torch.Tensor:
        handle = kernel[grid](
            d_pre_act, gate_up, expert_start, tile_row_start, tile_expert, dx_expanded,
            H_dim=hidden, I_dim=inter, stride_d_pre_TK=d_pre_act.stride(0),
            stride_d_pre_N=d_pre_act.stride(1), stride_w_E=gate_up.stride(0),
            stride_w_N=gate_up.stride(1), stride_w_K=gate_up.stride(2),
            stride_dxe_TK=dx_expanded.stride(0), stride_dxe_H=dx_expanded.stride(1),
            BLOCK_M=block_m, BLOCK_N=block_n, BLOCK_K=block_k,
            num_warps=knob["num_warps"], num_stages=knob["num_stages"],
        )  # fmt: skip
        _common.record(
            LAST_INFO, handle, kernels=1, kernel_names=["_moe_bwd_dX_expanded_kernel"],
            programs=grid[0] * grid[1], routing_tiles=grid[0], **knob,
        )  # fmt: skip
        return dx_expanded

    return launch
