"""FlagGems' MoE gating top-k softmax (src/flag_gems/fused/topk_softmax.py, v5.0.2:
`topk_gating_softmax_kernel`), launched as FlagGems' `topk_softmax` launches it, so that
its launch choices are knobs.

One program per BLOCK_SIZE_ROWS tokens loads their [rows, BLOCK_SIZE_EXPERTS] logits (the
experts past the count masked to -inf), takes each row's softmax in fp32, then k rounds of
a row max with its index (`tl.max(..., return_indices=True)`): each round stores the
probability, the expert (int32 here) and the source row k * tokens + token, and masks the
chosen expert to -inf.  With renormalize, a second loop reads the k stored weights back
and divides them by their sum.

FlagGems' launch (no autotune): BLOCK_SIZE_EXPERTS the next power of two of the experts
rounded up to a multiple of 32 (at most 1024), BLOCK_SIZE_ROWS 1024 // BLOCK_SIZE_EXPERTS
with 4 warps, or 1 row with 1 warp above 128 experts (a row per warp for the reductions);
no stages passed (Triton's default 3).  Knobs: the row tile, the expert tile (at least the
expert count: the kernel has no column loop) and the warps, None keeping FlagGems' choice.
The kernel's loops hold only the k stores and the renormalizing reads of its own output, so
the stages are no knob.  The three outputs, allocated per call by vLLM's `fused_topk`, are
made in `prepare`.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import torch
import triton
import triton.language as tl

from foreign import _common

LAST_INFO: dict[str, Any] = {}
TRITON_DEFAULT_STAGES = 3


def flaggems_blocks(experts: int) -> tuple[int, int, int]:
    """FlagGems' (rows per program, expert tile, warps) for the expert count."""
    block_e = min(((triton.next_power_of_2(experts) + 31) // 32) * 32, 1024)
    block_rows = max(1024 // block_e, 1)
    if experts > 128:
        return 1, block_e, 1
    return block_rows, block_e, 4


@dataclass(frozen=True)
class TopkSoftmaxConfig:
    block_rows: int | None = None  # None: FlagGems' 1024 // expert tile (8 at 128 experts)
    block_experts: int | None = None  # None: FlagGems' next power of two, a multiple of 32
    num_warps: int | None = None  # None: FlagGems' 4 (1 above 128 experts)


def prepare(
    cfg: TopkSoftmaxConfig, gating_output: torch.Tensor, topk: int
) -> Callable[[], tuple[torch.Tensor, torch.Tensor, torch.Tensor]]:
    mod = _common.load_source("flaggems_topk_softmax")
    if gating_output.dim() != 2 or not gating_output.is_contiguous():
        raise ValueError("gating_output must be a contiguous [tokens, experts] matrix")
    tokens, experts = gating_output.shape
    fg_rows, fg_experts, fg_warps = flaggems_blocks(experts)
    block_rows = cfg.block_rows or fg_rows
    block_e = cfg.block_experts or fg_experts
    warps = cfg.num_warps or fg_warps
    if block_e < experts or block_e & (block_e - 1):
        raise ValueError(f"block_experts {block_e} must be a power of two >= {experts}")
    dev = gating_output.device
    weights = torch.empty(tokens, topk, dtype=torch.float32, device=dev)
    ids = torch.empty(tokens, topk, dtype=torch.int32, device=dev)
    rows = torch.empty(tokens, topk, dtype=torch.int32, device=dev)
    grid = (triton.cdiv(tokens, block_rows),)

    def launch() -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        handle = mod.topk_gating_softmax_kernel[grid](
            gating_output, None, weights, ids, rows, tokens, topk, experts, 0, experts,
            renormalize=True, INDEX_TY=tl.int32, BLOCK_SIZE_ROWS=block_rows,
            BLOCK_SIZE_EXPERTS=block_e, num_warps=warps,
        )  # fmt: skip
        _common.record(
            LAST_INFO, handle, kernels=1, kernel_names=["topk_gating_softmax_kernel"],
            block_rows=block_rows, block_experts=block_e, num_warps=warps,
            num_stages=TRITON_DEFAULT_STAGES, programs=grid[0],
        )  # fmt: skip
        return weights, ids, rows

    return launch
