"""Liger-Kernel's fused MoE down-projection and SwiGLU backward (liger_kernel.ops.
fused_moe_kernels, 0.8.5: `_moe_bwd_down_proj_kernel`), launched by our copy of the first
step of `LigerFusedMoEFunction.backward` so that its launch choices are knobs.

Liger's MoE backward does not keep the down projection's output Y [tokens * k, hidden];
it recomputes the gradient of the SwiGLU output instead, g = d_out[token] @ down[e], for
every (token, expert) assignment row, in the expert-sorted order of the forward's routing,
and fuses into that grouped GEMM everything the rest of the backward needs from it: the
SwiGLU backward from the saved pre-activations, the weighted activation s * y1 that the
down weight's gradient (the next kernel) multiplies, and the gradient of every routing
weight s.

The grid is the forward's: (routing tiles, inter / BLOCK_N), one expert per BLOCK_M-row
tile (Liger's `BLOCK_M_TOKEN`, 64: the routing metadata's tile_row_start and tile_expert
are made for it).  A program reads its tile's expert, first row and the expert's end, the
BLOCK_M rows' tokens (x_gather_idx), flat (token, k) indices (s_scatter_idx) and routing
weights once, then walks the hidden size BLOCK_K at a time: a [BLOCK_M, BLOCK_K] tile of
d_out gathered by token (one row per token, hidden-contiguous) and a [BLOCK_K, BLOCK_N]
tile of the expert's down weight (inter-contiguous), rows past the expert's end masked to
zero, one tl.dot into a [BLOCK_M, BLOCK_N] fp32 accumulator; the loop is a `tl.range`,
software-pipelined by num_stages.  The epilogue loads the rows' gate and up tiles of
pre_act (fp32), recomputes y1 = silu(gate) * up, stores s * y1 to weighted_act, reduces
g * y1 over its BLOCK_N columns into a per-row partial of d_weights and adds it with
tl.atomic_add at the row's flat (token, k) index (each row's inter / BLOCK_N column tiles
meet there, so d_weights must start at zero), scales g by s, and stores SwiGLU's
d(gate) and d(up) tiles to d_pre_act: three stores and an atomic per program, no
re-read.  Each column slice of an expert's down weight is read once per routing tile of
that expert, and each tile's d_out rows are gathered again by every column tile.

Liger's choices: BLOCK_M 64 (a module constant, outside the autotuner because the
routing tiles depend on it), and for the rest an autotuner over 32 configurations (BLOCK_N
of 64 or 128, BLOCK_K of 32 or 64, 4 or 8 warps, 2 to 5 stages) keyed on (hidden, inter),
with no table of tuned values and reset_to_zero on d_weights -- or, with
LIGER_FUSED_MOE_AUTOTUNE=0 (its escape hatch for the autotuner's memory use), one pinned
configuration: BLOCK_N 128, BLOCK_K 64, 8 warps, 2 stages, the same as its forward MoE
GEMMs'.  That pinned configuration is Liger's here (None keeps it), as in
liger_moe_up_proj and liger_moe_down_proj; the autotuner is bypassed (its `.fn`, the
plain kernel, is launched).  Knobs: `block_m`, `block_n`, `block_k`, `num_warps`,
`num_stages`.

Set-up in `prepare`, outside the timed call: the routing metadata the forward saved
(Liger's own `compute_routing_metadata`, three Triton kernels and a host sync, at the
block_m the launch uses) and d_pre_act and weighted_act (Liger's torch.empty: the kernel
writes every assignment row of both).  The timed call is d_weights' zero fill (Liger
allocates it with torch.zeros on every backward, and the kernel's atomics add into it)
and the kernel: two launches.
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
class LigerMoeDownProjBwdConfig:
    block_m: int | None = None  # None: liger's 64 (rows of a routing tile)
    block_n: int | None = None  # None: liger's pinned 128 (inter columns per program)
    block_k: int | None = None  # None: liger's pinned 64 (hidden depth per tl.dot step)
    num_warps: int | None = None  # None: liger's pinned 8
    num_stages: int | None = None  # None: liger's pinned 2


def prepare(
    cfg: LigerMoeDownProjBwdConfig, d_out: torch.Tensor, pre_act: torch.Tensor,
    down: torch.Tensor, topk: torch.Tensor, weights: torch.Tensor,
) -> Callable[[], tuple[torch.Tensor, torch.Tensor, torch.Tensor]]:  # fmt: skip
    fix_scalar_index_if_interpreting()
    from liger_kernel.ops import fused_moe as liger
    from liger_kernel.ops import fused_moe_kernels as kernels

    if d_out.dim() != 2 or pre_act.dim() != 2 or down.dim() != 3 or topk.dim() != 2:
        raise ValueError(
            "d_out [tokens, hidden], pre_act [tokens * k, 2 * inter], "
            "down [experts, hidden, inter], topk [tokens, k]"
        )
    tensors = (d_out, pre_act, down, topk, weights)
    if not all(t.is_contiguous() for t in tensors):
        raise ValueError("every input must be contiguous (liger makes them so per call)")
    experts, hidden, inter = down.shape
    tokens, k = topk.shape
    if d_out.shape != (tokens, hidden) or weights.shape != (tokens, k):
        raise ValueError("d_out needs a row of width hidden and weights a row of k per token")
    if pre_act.shape != (tokens * k, 2 * inter):
        raise ValueError("pre_act must hold one row of width 2 * inter per assignment")
    knob = {f: _up.pick(cfg, f) for f in LIGER_LAUNCH}
    block_m, block_n, block_k = knob["block_m"], knob["block_n"], knob["block_k"]
    with torch.no_grad():
        _, expert_start, x_gather, s_scatter, _, tile_row_start, tile_expert = (
            liger.compute_routing_metadata(topk, experts, block_m_token=block_m)
        )
    weights_flat = weights.flatten()
    d_pre = torch.empty_like(pre_act)
    weighted_act = torch.empty(tokens * k, inter, dtype=d_out.dtype, device=d_out.device)
    d_weights = torch.empty(tokens * k, dtype=d_out.dtype, device=d_out.device)
    grid = (tile_row_start.shape[0], triton.cdiv(inter, block_n))
    kernel = kernels._moe_bwd_down_proj_kernel.fn  # the plain kernel under the autotuner

    def launch() -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        d_weights.zero_()
        handle = kernel[grid](
            d_out, x_gather, s_scatter, weights_flat, down, pre_act, expert_start,
            tile_row_start, tile_expert, d_pre, weighted_act, d_weights,
            H_dim=hidden, I_dim=inter, stride_dO_T=d_out.stride(0),
            stride_dO_H=d_out.stride(1), stride_w_E=down.stride(0), stride_w_H=down.stride(1),
            stride_w_I=down.stride(2), stride_pre_TK=pre_act.stride(0),
            stride_pre_N=pre_act.stride(1), stride_d_pre_TK=d_pre.stride(0),
            stride_d_pre_N=d_pre.stride(1), stride_wact_TK=weighted_act.stride(0),
            stride_wact_I=weighted_act.stride(1), BLOCK_M=block_m, BLOCK_N=block_n,
            BLOCK_K=block_k, num_warps=knob["num_warps"], num_stages=knob["num_stages"],
        )  # fmt: skip
        _common.record(
            LAST_INFO, handle, kernels=2,
            kernel_names=["zero_", "_moe_bwd_down_proj_kernel"],
            programs=grid[0] * grid[1], routing_tiles=grid[0], **knob,
        )  # fmt: skip
        return d_pre, weighted_act, d_weights.view(tokens, k)

    return launch
