"""FlagGems' MoE block alignment (src/flag_gems/fused/moe_align_block_size.py, v5.0.2:
`moe_align_block_size_stage1`, `_stage2_vec` or `_stage2`, `_stage3` and `_stage4`),
launched as FlagGems' `moe_align_block_size_triton` launches them with stock Triton (the
path it falls back to without FlagTree's TLE extension, which the fused cluster and
cooperative kernels above them need), so that their launch choices are knobs.

A counting sort of the flat top-k ids by expert in four launches, over an int32 scratch of
experts + 1 rows of experts counts (row 0 zero) and an int32 cumsum of experts + 1:

1. one program per expert p fills its share of sorted_ids with numel and of expert_ids
   with 0 (next_power_of_2(cdiv(length, experts)) elements of each), then atomically counts
   its tokens_per_thread = next_power_of_2(cdiv(numel, experts)) flat ids into row p + 1;
2. one program per expert column replaces rows 1..experts by their running sums down the
   column (`_stage2_vec`: one tl.cumsum over a power-of-two column; `_stage2`: a scalar
   loop of experts dependent loads and stores, where experts is not a power of two), so
   that row p holds the counts of programs 0..p-1;
3. one program rounds the column totals (the last row) up to block_size, stores their
   inclusive tl.cumsum from cumsum[1] on and the padded total;
4. one program per expert p labels its segment's blocks of expert_ids with p (a scalar
   store per block), then scatters its flat ids: each takes its rank from an atomic add on
   row p (its expert's count in the earlier programs, plus its own program's lanes of the
   same expert whose atomics landed first) and stores its flat index at cumsum[expert] +
   rank.

FlagGems' launch: fixed, no tuner, no num_warps or num_stages passed (Triton's default 4
warps, 3 stages; the only loops are `_stage2`'s scalar loads and stage 4's scalar label
stores, so the stages are no knob); `_stage2_vec` when experts is a power of two.  Every
size is the shape's (the programs are the experts, and the scratch's rows are the
programs), so the knobs are each launch's warps: `count_warps`, `scan_warps`,
`offsets_warps`, `scatter_warps`, None keeping Triton's default.  FlagGems allocates the
two scratch buffers per call with torch.zeros and the caller (vLLM's
`moe_align_block_size`) the three outputs with torch.empty; here all five are made in
`prepare`, and the timed call zero-fills the counts (stages 1 and 4 add into them) before
the four launches.  The cumsum is zeroed once: only its first element must be zero, and no
launch writes it.  The stages keep do_not_specialize on numel, as upstream; the sorted and
expert lengths are constexprs, so each shape compiles its own stage 1.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import torch
import triton

from foreign import _common

LAST_INFO: dict[str, Any] = {}
TRITON_DEFAULT_WARPS = 4  # FlagGems passes no num_warps to any of the four launches


@dataclass(frozen=True)
class MoeAlignConfig:
    count_warps: int | None = None  # stage 1; None: Triton's default 4
    scan_warps: int | None = None  # stage 2; None: Triton's default 4
    offsets_warps: int | None = None  # stage 3; None: Triton's default 4
    scatter_warps: int | None = None  # stage 4; None: Triton's default 4


def prepare(
    cfg: MoeAlignConfig, topk_ids: torch.Tensor, experts: int, block_size: int
) -> Callable[[], tuple[torch.Tensor, torch.Tensor, torch.Tensor]]:
    mod = _common.load_source("flaggems_moe_align")
    if topk_ids.dtype != torch.int32 or not topk_ids.is_contiguous():
        raise ValueError("topk_ids must be contiguous int32 (the router's global expert ids)")
    dev = topk_ids.device
    numel = topk_ids.numel()
    # vLLM's and FlagGems' moe_align_block_size: max_num_tokens_padded (pad_sorted_ids off)
    padded = numel + experts * (block_size - 1)
    blocks = triton.cdiv(padded, block_size)
    sorted_ids = torch.empty(padded, dtype=torch.int32, device=dev)
    expert_ids = torch.empty(blocks, dtype=torch.int32, device=dev)
    post_pad = torch.empty(1, dtype=torch.int32, device=dev)
    # moe_align_block_size_triton's sizes, all from the shape
    per_program = triton.next_power_of_2(triton.cdiv(numel, experts))
    fill_sorted = triton.next_power_of_2(triton.cdiv(padded, experts))
    fill_experts = triton.next_power_of_2(triton.cdiv(blocks, experts))
    experts_pow2 = triton.next_power_of_2(experts)
    vec = experts == experts_pow2
    scan = mod.moe_align_block_size_stage2_vec if vec else mod.moe_align_block_size_stage2
    cumsum = torch.zeros(experts + 1, dtype=torch.int32, device=dev)
    counts = torch.zeros((experts + 1, experts), dtype=torch.int32, device=dev)
    warps = {
        "count_warps": cfg.count_warps or TRITON_DEFAULT_WARPS,
        "scan_warps": cfg.scan_warps or TRITON_DEFAULT_WARPS,
        "offsets_warps": cfg.offsets_warps or TRITON_DEFAULT_WARPS,
        "scatter_warps": cfg.scatter_warps or TRITON_DEFAULT_WARPS,
    }
    grid = (experts,)
    names = [
        "zero_", "moe_align_block_size_stage1",
        "moe_align_block_size_stage2_vec" if vec else "moe_align_block_size_stage2",
        "moe_align_block_size_stage3", "moe_align_block_size_stage4",
    ]  # fmt: skip

    def launch() -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        counts.zero_()
        h1 = mod.moe_align_block_size_stage1[grid](
            topk_ids, counts, experts, numel, per_program, sorted_ids, expert_ids, padded,
            blocks, fill_sorted, fill_experts, num_warps=warps["count_warps"],
        )  # fmt: skip
        scan[grid](counts, experts, num_warps=warps["scan_warps"])
        mod.moe_align_block_size_stage3[(1,)](
            post_pad, counts, cumsum, experts, experts_pow2, block_size,
            num_warps=warps["offsets_warps"],
        )  # fmt: skip
        mod.moe_align_block_size_stage4[grid](
            topk_ids, sorted_ids, expert_ids, counts, cumsum, experts, block_size, numel,
            per_program, num_warps=warps["scatter_warps"],
        )  # fmt: skip
        _common.record(
            LAST_INFO, h1, kernels=len(names), kernel_names=names,
            programs=3 * experts + 1, ids_per_program=per_program,
            busy_programs=triton.cdiv(numel, per_program), fill_sorted=fill_sorted,
            fill_experts=fill_experts, vector_scan=vec, **warps,
        )  # fmt: skip
        return sorted_ids, expert_ids, post_pad

    return launch
