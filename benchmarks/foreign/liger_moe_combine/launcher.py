"""Liger-Kernel's fused MoE token aggregation (liger_kernel.ops.fused_moe_kernels, 0.8.5:
`_token_gather_weighted_sum_kernel`, adapted there from SonicMoE's token_gather_sum_kernel),
launched by our copy of `_token_aggregation`, the last step of
`LigerFusedMoEFunction.forward`, so that its launch choices are knobs.

Liger's MoE forward sorts the (token, expert) assignments by expert (its routing metadata)
and leaves the down projection's output Y [tokens * k, hidden] in that sorted order, one
row per assignment.  The combine then gives each token its output row: the token's k rows
of Y, found through s_reverse_scatter_idx (flat (token, j) index -> sorted row), times
their routing weights and summed in fp32, stored once in the model dtype.

The grid is one program per token.  A program walks the hidden size BLOCK_H columns at a
time in a `tl.static_range` (hidden / BLOCK_H copies of the body, unrolled: 16 at the
trials' 2048), and inside each column tile the token's k assignments BLOCK_K at a time in
a `tl.range` (software-pipelined by num_stages): it loads BLOCK_K sorted positions and
routing weights (contiguous, the token's flat indices; those past k masked), gathers a
[BLOCK_K, BLOCK_H] tile of Y at those rows (each row hidden-contiguous, the rows scattered
over the sorted order, wherever the token's experts put them), multiplies by the weights
and sums over the BLOCK_K axis into a [BLOCK_H] fp32 accumulator, then stores the tile.
The positions and weights are re-read for every column tile; each element of Y is read
exactly once, no atomics, no reuse.  With w_is_None (the backward's unweighted gather-sum
of dx_expanded) the weights are not read; that launch is not this one.

Liger's choices: an autotuner over 40 configurations (BLOCK_H of 64 to 512, BLOCK_K of 1
to 16 with BLOCK_H * BLOCK_K at most 32,768, 4 or 8 warps, 4 stages) keyed on (hidden, k,
w_is_None), with no table of tuned values -- or, with LIGER_FUSED_MOE_AUTOTUNE=0 (its
escape hatch for the autotuner's memory use), one pinned configuration: BLOCK_H 128,
BLOCK_K 4, 4 warps, 4 stages.  That pinned configuration is Liger's here (None keeps it),
as in the other liger_moe_* wrappers; the autotuner is bypassed (its `.fn`, the plain
kernel, is launched).  Knobs: `block_h`, `block_k`, `num_warps`, `num_stages`.

Set-up in `prepare`, outside the timed call: the routing metadata the forward made
(Liger's own `compute_routing_metadata`, three Triton kernels and a host sync; only
s_reverse_scatter_idx is read here), the flat routing weights (Liger's flatten of the
contiguous [tokens, k] weights, a view) and the output (Liger's torch.empty: every row is
written).  The timed call is the kernel alone: one launch.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import torch

from foreign import _common
from kbopt.bench.interpreter import fix_scalar_index_if_interpreting

LAST_INFO: dict[str, Any] = {}
# the configuration liger's token-gather autotuner list pins with LIGER_FUSED_MOE_AUTOTUNE=0
LIGER_LAUNCH = {"block_h": 128, "block_k": 4, "num_warps": 4, "num_stages": 4}


@dataclass(frozen=True)
class LigerMoeCombineConfig:
    block_h: int | None = None  # None: liger's pinned 128 (hidden columns per tile)
    block_k: int | None = None  # None: liger's pinned 4 (assignments per step)
    num_warps: int | None = None  # None: liger's pinned 4
    num_stages: int | None = None  # None: liger's pinned 4


def pick(cfg: LigerMoeCombineConfig, name: str) -> int:
    value = getattr(cfg, name)
    if value is not None and (not isinstance(value, int) or value < 1):
        raise ValueError(f"{name} must be a positive int or None, got {value!r}")
    return int(value) if value is not None else LIGER_LAUNCH[name]


def prepare(
    cfg: LigerMoeCombineConfig, y: torch.Tensor, weights: torch.Tensor, topk: torch.Tensor
) -> Callable[[], torch.Tensor]:
    fix_scalar_index_if_interpreting()
    from liger_kernel.ops import fused_moe as liger
    from liger_kernel.ops import fused_moe_kernels as kernels

    if y.dim() != 2 or weights.dim() != 2 or topk.dim() != 2:
        raise ValueError("y [tokens * k, hidden], weights [tokens, k], topk [tokens, k]")
    if not all(t.is_contiguous() for t in (y, weights, topk)):
        raise ValueError("every input must be contiguous (liger makes them so per call)")
    tokens, k = topk.shape
    hidden = y.shape[1]
    if weights.shape != topk.shape or y.shape[0] != topk.numel():
        raise ValueError("y must hold one row per assignment and weights one per top-k slot")
    block_h, block_k = pick(cfg, "block_h"), pick(cfg, "block_k")
    warps, stages = pick(cfg, "num_warps"), pick(cfg, "num_stages")
    for name, value in (("block_h", block_h), ("block_k", block_k)):
        if value & (value - 1):
            raise ValueError(f"{name} must be a power of two (a tl.arange), got {value}")
    # the experts past the largest routed id get no rows: the sort is the same without them
    experts = int(topk.max()) + 1 if topk.numel() else 1
    with torch.no_grad():
        s_reverse = liger.compute_routing_metadata(topk, experts)[4]
    w_flat = weights.flatten()
    out = torch.empty(tokens, hidden, dtype=y.dtype, device=y.device)
    grid = (tokens,)
    kernel = kernels._token_gather_weighted_sum_kernel.fn  # the plain kernel under the autotuner

    def launch() -> torch.Tensor:
        handle = kernel[grid](
            y, w_flat, s_reverse, out, H_dim=hidden, K_dim=k, stride_Y_TK=y.stride(0),
            stride_Y_H=y.stride(1), stride_out_T=out.stride(0), stride_out_H=out.stride(1),
            BLOCK_H=block_h, BLOCK_K=block_k, w_is_None=False, num_warps=warps,
            num_stages=stages,
        )  # fmt: skip
        _common.record(
            LAST_INFO, handle, kernels=1, kernel_names=["_token_gather_weighted_sum_kernel"],
            block_h=block_h, block_k=block_k, num_warps=warps, num_stages=stages,
            programs=tokens,
        )  # fmt: skip
        return out

    return launch
