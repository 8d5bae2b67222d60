"""Liger-Kernel's fused MoE gate/up weight gradient (liger_kernel.ops.fused_moe_kernels,
0.8.5: `_moe_bwd_dW1_kernel`), launched by our copy of the last step of
`LigerFusedMoEFunction.backward` so that its launch choices are knobs.

By that step Liger's backward has recomputed the down projection's input gradient and run
the SwiGLU backward, leaving d_pre_act [tokens * k, 2 * inter]: one row per (token, expert)
assignment in the expert-sorted order of the forward's routing, the gate's gradient in the
first inter columns and the up projection's in the rest.  The weight gradient of the
stacked gate/up weights is then, per expert e, dW1[e] = d_pre_act[rows of e]^T @
x[tokens of those rows]: a grouped GEMM whose reduction runs over the expert's own
assignments, a different count for every expert, read through the routing's expert start
offsets (expert_start_idx, experts + 1 int32) and gather indices (x_gather_idx: sorted row
-> token, int32).

One program per (expert, BLOCK_M columns of hidden) -- grid dimension 0, expert-major --
and BLOCK_N of the 2 * inter gradient rows (dimension 1).  A program reads its expert's
start and end; an expert with no rows returns at once (its slab keeps the zeros the
gradient was allocated with).  Otherwise it walks the expert's rows BLOCK_K at a time: the
BLOCK_K gather indices, a [BLOCK_K, BLOCK_M] tile of the gathered x rows (one row per
token, hidden-contiguous) and a [BLOCK_K, BLOCK_N] tile of the contiguous d_pre_act rows,
rows past the expert's end masked to zero, then one tl.dot of the d_pre_act tile
transposed by the x tile into a [BLOCK_N, BLOCK_M] fp32 accumulator; the loop is a
`tl.range`, software-pipelined by num_stages.  At the end it stores the accumulator in the
model dtype to dW1[e, n-tile, h-tile] with one plain store (no atomics: each output tile
has one program).  Every program of an expert re-reads that expert's rows: x's once per
BLOCK_N tile and d_pre_act's once per BLOCK_M tile.

Liger's choices: an autotuner over 16 configurations (BLOCK_M and BLOCK_N of 64 or 128,
BLOCK_K of 16 or 32, 4 or 8 warps, 2 stages) keyed on (hidden, inter), with no table of
tuned values -- or, with LIGER_FUSED_MOE_AUTOTUNE=0 (its escape hatch for the autotuner's
memory use), one pinned configuration: BLOCK_M 64, BLOCK_N 128, BLOCK_K 32, 8 warps, 2
stages.  That pinned configuration is Liger's here (None keeps it), as in
liger_moe_up_proj and liger_moe_down_proj; the autotuner is bypassed (its `.fn`, the plain
kernel, is launched).  BLOCK_M here tiles the hidden size, not the routing's 64-row token
tiles, which this kernel does not read.  Knobs: `block_m`, `block_n`, `block_k`,
`num_warps`, `num_stages`.

Set-up in `prepare`, outside the timed call: the routing metadata the forward saved
(Liger's `compute_routing_metadata`, three Triton kernels and a host sync; here the same
expert starts and gather indices by torch ops, a bincount and a stable argsort of the flat
top-k ids, which give the same values -- checked against Liger's kernels under the CPU
interpreter) and the gradient buffer, zero-filled once.  Liger allocates the gradient with
torch.zeros_like on every backward; the kernel never adds into it and rewrites every tile
of every routed expert, so one fill serves every call for the same routing.  The timed
call is the one launch.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import torch
import triton

from foreign import _common
from kbopt.bench.interpreter import fix_scalar_index_if_interpreting

LAST_INFO: dict[str, Any] = {}
# the configuration liger pins for its weight-gradient kernels (dW1 and dW2) with
# LIGER_FUSED_MOE_AUTOTUNE=0
LIGER_LAUNCH = {"block_m": 64, "block_n": 128, "block_k": 32, "num_warps": 8, "num_stages": 2}


@dataclass(frozen=True)
class LigerMoeUpProjWgradConfig:
    block_m: int | None = None  # None: liger's pinned 64 (hidden columns per program)
    block_n: int | None = None  # None: liger's pinned 128 (gate/up gradient rows per program)
    block_k: int | None = None  # None: liger's pinned 32 (expert rows per tl.dot step)
    num_warps: int | None = None  # None: liger's pinned 8
    num_stages: int | None = None  # None: liger's pinned 2


def routing(topk: torch.Tensor, experts: int) -> tuple[torch.Tensor, torch.Tensor]:
    """(expert_start_idx [experts + 1], x_gather_idx [tokens * k]), int32, as Liger's
    `compute_routing_metadata` returns them: each expert's first sorted row, and the token
    of each row sorted by expert, then by token."""
    flat = topk.flatten().long()
    counts = torch.bincount(flat, minlength=experts)
    start = torch.zeros(experts + 1, dtype=torch.int32, device=topk.device)
    start[1:] = torch.cumsum(counts, 0).to(torch.int32)
    gather = (torch.argsort(flat, stable=True) // topk.shape[1]).to(torch.int32)
    return start, gather


def prepare(
    cfg: LigerMoeUpProjWgradConfig, x: torch.Tensor, d_pre: torch.Tensor, topk: torch.Tensor,
    experts: int,
) -> Callable[[], torch.Tensor]:  # fmt: skip
    fix_scalar_index_if_interpreting()
    from liger_kernel.ops import fused_moe_kernels as kernels

    if x.dim() != 2 or d_pre.dim() != 2 or topk.dim() != 2:
        raise ValueError("x [tokens, hidden], d_pre [tokens * k, 2 * inter], topk [tokens, k]")
    if not (x.is_contiguous() and d_pre.is_contiguous() and topk.is_contiguous()):
        raise ValueError("x, d_pre and topk must be contiguous (liger makes them so per call)")
    tokens, hidden = x.shape
    k = topk.shape[1]
    if topk.shape[0] != tokens or d_pre.shape[0] != tokens * k or d_pre.shape[1] % 2:
        raise ValueError("topk must have a row per token and d_pre a row per assignment")
    inter = d_pre.shape[1] // 2
    knob = {f: getattr(cfg, f) or LIGER_LAUNCH[f] for f in LIGER_LAUNCH}
    block_m, block_n, block_k = knob["block_m"], knob["block_n"], knob["block_k"]
    with torch.no_grad():
        expert_start, x_gather = routing(topk, experts)
    rows = torch.diff(expert_start).tolist()  # set-up only: the record's busy programs
    dw1 = torch.zeros(experts, 2 * inter, hidden, dtype=x.dtype, device=x.device)
    tiles = triton.cdiv(hidden, block_m) * triton.cdiv(2 * inter, block_n)
    grid = (experts * triton.cdiv(hidden, block_m), triton.cdiv(2 * inter, block_n))
    kernel = kernels._moe_bwd_dW1_kernel.fn  # the plain kernel under the autotuner

    def launch() -> torch.Tensor:
        handle = kernel[grid](
            x, d_pre, x_gather, expert_start, dw1,
            H_dim=hidden, I_dim=inter, stride_x_T=x.stride(0), stride_x_H=x.stride(1),
            stride_d_pre_TK=d_pre.stride(0), stride_d_pre_N=d_pre.stride(1),
            stride_dW1_E=dw1.stride(0), stride_dW1_N=dw1.stride(1),
            stride_dW1_H=dw1.stride(2), BLOCK_M=block_m, BLOCK_N=block_n, BLOCK_K=block_k,
            num_warps=knob["num_warps"], num_stages=knob["num_stages"],
        )  # fmt: skip
        _common.record(
            LAST_INFO, handle, kernels=1, kernel_names=["_moe_bwd_dW1_kernel"],
            programs=grid[0] * grid[1], busy_programs=tiles * sum(1 for r in rows if r),
            max_expert_rows=max(rows, default=0), **knob,
        )  # fmt: skip
        return dw1

    return launch
