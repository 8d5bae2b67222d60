"""Liger-Kernel's fused MoE up-projection (liger_kernel.ops.fused_moe_kernels, 0.8.5): the
gather + grouped GEMM + SwiGLU kernel `_fused_up_proj_swiglu_kernel`, launched by our copy
of that step of `LigerFusedMoEFunction.forward` so that its launch choices are knobs.

Liger first sorts the (token, expert) assignments by expert with three routing kernels of
its own (`compute_routing_metadata`: a histogram, prefix sums, a scatter, and one host
sync for the number of row tiles), giving each BLOCK_M-row tile one expert.  The GEMM's
grid is (row tiles, intermediate / BLOCK_N): a program gathers its tile's token rows of x
by index, multiplies them by BLOCK_N rows of its expert's gate and up weights in BLOCK_K
steps (two tl.dot per step, fp32 accumulators) and writes both pre-activations and
silu(gate) * up.  Liger's choices: BLOCK_M 64 (a module constant, fixed outside the
autotuner because the routing tiles depend on it), and for the rest an autotuner over 32
configurations keyed on (hidden, intermediate) -- or, with LIGER_FUSED_MOE_AUTOTUNE=0, its
one pinned configuration: BLOCK_N 128, BLOCK_K 64, 8 warps, 2 stages.  That pinned
configuration is Liger's here (None keeps it); the autotuner is bypassed (its `.fn`, the
plain kernel, is launched), since tuning would compile 32 tl.dot kernels per run.  Knobs:
`block_m`, `block_n`, `block_k`, `num_warps`, `num_stages`.

The routing metadata and the output buffers are set-up per batch and happen in `prepare`;
the timed call is the GEMM launch alone (Liger's down-projection and token aggregation,
separate kernels, are not part of it).
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
# liger's BLOCK_M_TOKEN and the configuration it pins with LIGER_FUSED_MOE_AUTOTUNE=0
LIGER_LAUNCH = {"block_m": 64, "block_n": 128, "block_k": 64, "num_warps": 8, "num_stages": 2}


@dataclass(frozen=True)
class LigerMoeUpProjConfig:
    block_m: int | None = None  # None: liger's 64 (rows of a routing tile)
    block_n: int | None = None  # None: liger's pinned 128
    block_k: int | None = None  # None: liger's pinned 64
    num_warps: int | None = None  # None: liger's pinned 8
    num_stages: int | None = None  # None: liger's pinned 2


def pick(cfg: Any, name: str) -> int:
    """The configuration's `name`, or liger's pinned value where it is None (the up- and
    down-projection configurations have the same fields)."""
    value = getattr(cfg, name)
    return int(value) if value is not None else LIGER_LAUNCH[name]


def prepare(
    cfg: LigerMoeUpProjConfig, x: torch.Tensor, gate_up: torch.Tensor, topk: torch.Tensor
) -> Callable[[], tuple[torch.Tensor, torch.Tensor]]:
    fix_scalar_index_if_interpreting()
    from liger_kernel.ops import fused_moe as liger
    from liger_kernel.ops import fused_moe_kernels as kernels

    if x.dim() != 2 or gate_up.dim() != 3 or topk.dim() != 2:
        raise ValueError(
            "x [tokens, hidden], gate_up [experts, 2 * inter, hidden], topk [tokens, k]"
        )
    if not (x.is_contiguous() and gate_up.is_contiguous() and topk.is_contiguous()):
        raise ValueError("x, gate_up and topk must be contiguous (liger makes them so per call)")
    tokens, hidden = x.shape
    experts, two_inter, _ = gate_up.shape
    inter = two_inter // 2
    k = topk.shape[1]
    block_m, block_n, block_k = (pick(cfg, n) for n in ("block_m", "block_n", "block_k"))
    warps, stages = pick(cfg, "num_warps"), pick(cfg, "num_stages")
    with torch.no_grad():
        _, expert_start, x_gather, _, _, tile_row_start, tile_expert = (
            liger.compute_routing_metadata(topk, experts, block_m_token=block_m)
        )
    pre_act = torch.empty(tokens * k, two_inter, dtype=x.dtype, device=x.device)
    post_act = torch.empty(tokens * k, inter, dtype=x.dtype, device=x.device)
    grid = (tile_row_start.shape[0], triton.cdiv(inter, block_n))
    kernel = kernels._fused_up_proj_swiglu_kernel.fn  # the plain kernel under the autotuner

    def launch() -> tuple[torch.Tensor, torch.Tensor]:
        handle = kernel[grid](
            x, gate_up, x_gather, expert_start, tile_row_start, tile_expert, pre_act, post_act,
            H_dim=hidden, I_dim=inter, stride_x_T=x.stride(0), stride_x_H=x.stride(1),
            stride_w_E=gate_up.stride(0), stride_w_N=gate_up.stride(1),
            stride_w_K=gate_up.stride(2), stride_pre_TK=pre_act.stride(0),
            stride_pre_N=pre_act.stride(1), stride_post_TK=post_act.stride(0),
            stride_post_N=post_act.stride(1), BLOCK_M=block_m, BLOCK_N=block_n,
            BLOCK_K=block_k, num_warps=warps, num_stages=stages,
        )  # fmt: skip
        _common.record(
            LAST_INFO, handle, kernels=1, kernel_names=["_fused_up_proj_swiglu_kernel"],
            block_m=block_m, block_n=block_n, block_k=block_k, num_warps=warps,
            num_stages=stages, programs=grid[0] * grid[1],
        )  # fmt: skip
        return pre_act, post_act

    return launch
