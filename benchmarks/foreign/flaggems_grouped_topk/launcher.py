"""FlagGems' group-limited top-k routing (src/flag_gems/fused/grouped_topk.py, v5.0.2:
`topk_with_k2_triton` and `group_idx_and_topk_triton`), launched as FlagGems'
`grouped_topk` launches them, so that their launch choices are knobs.

Two launches.  The first has one program per token and expert group: it loads the
group's biased scores (a tile of the next power of two of the group's experts), finds the
best two with two max reductions and stores their sum in the scores' dtype.  The second has
one program per token: it loads the token's group scores, finds the `topk_group`-th best by
`topk_group` max rounds, keeps the groups above it (ties by a cumsum), loads the kept
groups' biased scores across a tile of all experts (the others masked off), then picks the
`topk` experts one by one (a max and a min-index reduction over the whole tile and a
scalar load of the unbiased score per round), renormalises and scales them and stores the
fp32 weights and int32 ids.

FlagGems' launch: the tiles are the next powers of two of the group's experts, the groups
and the experts (the kernels need at least those), with Triton's default 4 warps and 3
stages for both launches (FlagGems passes none; no autotune, no tuning YAML entry).
Knobs: the warps of each launch, None keeping Triton's 4; neither kernel has a loop over
memory (its rounds are unrolled over registers), so the stages are no knob.  FlagGems'
per-call group scores and outputs are made in `prepare`; its sigmoid (`scoring_func=1`)
runs before the kernels as a separate op and is left to the caller (scores in, as
`scoring_func=0`).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import torch
import triton
import triton.language as tl

from foreign import _common
from foreign.flaggems_grouped_topk.reference import RENORMALIZE, ROUTED_SCALING_FACTOR

LAST_INFO: dict[str, Any] = {}
TRITON_DEFAULT_WARPS = 4
TRITON_DEFAULT_STAGES = 3
_TL_DTYPE = {torch.float32: tl.float32, torch.float16: tl.float16, torch.bfloat16: tl.bfloat16}


@dataclass(frozen=True)
class GroupedTopkConfig:
    group_warps: int | None = None  # None: Triton's default 4 (FlagGems passes none)
    select_warps: int | None = None  # None: Triton's default 4 (FlagGems passes none)


def prepare(
    cfg: GroupedTopkConfig, scores: torch.Tensor, bias: torch.Tensor, groups: int,
    topk_group: int, topk: int,
) -> Callable[[], tuple[torch.Tensor, torch.Tensor]]:  # fmt: skip
    mod = _common.load_source("flaggems_grouped_topk")
    tokens, experts = scores.shape
    if experts % groups or groups > 32 or topk > 32 or topk & (topk - 1):
        raise ValueError("experts must split into at most 32 groups; topk a power of two <= 32")
    if not scores.is_contiguous():
        raise ValueError("scores must be contiguous")
    bias = bias.to(scores.dtype).flatten()
    per_group = experts // groups
    in_dtype = _TL_DTYPE[scores.dtype]
    group_warps = cfg.group_warps or TRITON_DEFAULT_WARPS
    select_warps = cfg.select_warps or TRITON_DEFAULT_WARPS
    block1 = triton.next_power_of_2(per_group)
    block_group = triton.next_power_of_2(groups)
    block_expert = triton.next_power_of_2(experts)
    group_scores = torch.empty(tokens, groups, dtype=scores.dtype, device=scores.device)
    values = torch.empty(tokens, topk, dtype=torch.float32, device=scores.device)
    indices = torch.empty(tokens, topk, dtype=torch.int32, device=scores.device)
    grid1 = (tokens * groups,)
    grid2 = (tokens,)

    def launch() -> tuple[torch.Tensor, torch.Tensor]:
        h1 = mod.topk_with_k2_triton[grid1](
            scores, bias, group_scores, per_group, groups, scores.stride(0),
            group_scores.stride(0), BLOCK_SIZE=block1, INPUT_DTYPE=in_dtype,
            num_warps=group_warps,
        )  # fmt: skip
        # compiled Triton passes the scaling factor as an fp32 scalar; so does the
        # interpreter here
        with _common.interpreter_float_scalars():
            mod.group_idx_and_topk_triton[grid2](
                scores, group_scores, values, indices, bias, tokens, groups, topk_group, topk,
                experts, per_group, ROUTED_SCALING_FACTOR, scores.stride(0),
                group_scores.stride(0), values.stride(0), N_GROUP=groups,
                TOPK_GROUP=topk_group, TOPK=topk, BLOCK_GROUP=block_group,
                BLOCK_EXPERT=block_expert, INPUT_DTYPE=in_dtype,
                renormalize=int(RENORMALIZE), num_warps=select_warps,
            )  # fmt: skip
        _common.record(
            LAST_INFO, h1, kernels=2,
            kernel_names=["topk_with_k2_triton", "group_idx_and_topk_triton"],
            group_block=block1, group_warps=group_warps, select_block=block_expert,
            select_warps=select_warps, num_stages=TRITON_DEFAULT_STAGES,
            programs=grid1[0] + grid2[0],
        )  # fmt: skip
        return values, indices

    return launch
