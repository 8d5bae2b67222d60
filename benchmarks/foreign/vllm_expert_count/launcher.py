"""vLLM's per-expert token count for the DeepGEMM MoE path
(vllm/model_executor/layers/fused_moe/utils.py, v0.34.0: `_count_expert_num_tokens`),
launched as vLLM's `count_expert_num_tokens` launches it, so that its launch choices are
knobs.

One program per local expert.  Each walks the whole flattened [tokens * topk] id list in
BLOCK_SIZE steps (masked past the end to -1), maps every id through the expert map when
there is one (global -> local, -1 for other ranks' experts), adds 1 to a BLOCK_SIZE-lane
int32 accumulator where the id is its own expert, and at the end stores the lanes' sum:
a histogram as num_local_experts full scans of the ids, the later ones from L2.

vLLM's launch: BLOCK_SIZE = next_power_of_2(min(tokens * topk, 1024)), Triton's default 4
warps and 3 stages (vLLM passes neither; the loop's loads make the stages count).  Knobs:
the id block, the warps and the stages, None keeping vLLM's.  vLLM's per-call output
(torch.empty of local experts int32) is made in `prepare`.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import torch
import triton

from foreign import _common

LAST_INFO: dict[str, Any] = {}
VLLM_MAX_BLOCK = 1024
TRITON_DEFAULT_WARPS = 4
TRITON_DEFAULT_STAGES = 3


@dataclass(frozen=True)
class ExpertCountConfig:
    block: int | None = None  # None: vLLM's next_power_of_2(min(numel, 1024))
    num_warps: int | None = None  # None: Triton's default 4 (vLLM passes none)
    num_stages: int | None = None  # None: Triton's default 3 (vLLM passes none)


def vllm_block(numel: int) -> int:
    return triton.next_power_of_2(min(numel, VLLM_MAX_BLOCK))


def prepare(
    cfg: ExpertCountConfig, topk_ids: torch.Tensor, local_experts: int,
    expert_map: torch.Tensor | None,
) -> Callable[[], torch.Tensor]:  # fmt: skip
    mod = _common.load_source("vllm_expert_count")
    if not topk_ids.dtype.is_signed or not topk_ids.is_contiguous():
        raise ValueError("topk_ids must be signed (-1 marks no expert) and contiguous")
    numel = topk_ids.numel()
    block = cfg.block or vllm_block(numel)
    warps = cfg.num_warps or TRITON_DEFAULT_WARPS
    stages = cfg.num_stages or TRITON_DEFAULT_STAGES
    out = torch.empty(local_experts, dtype=torch.int32, device=topk_ids.device)
    grid = (local_experts,)

    def launch() -> torch.Tensor:
        handle = mod._count_expert_num_tokens[grid](
            topk_ids, out, local_experts, numel, expert_map,
            HAS_EXPERT_MAP=expert_map is not None, BLOCK_SIZE=block, num_warps=warps,
            num_stages=stages,
        )  # fmt: skip
        _common.record(
            LAST_INFO, handle, kernels=1, kernel_names=["_count_expert_num_tokens"],
            block=block, num_warps=warps, num_stages=stages, programs=grid[0],
            steps=triton.cdiv(numel, block),
        )  # fmt: skip
        return out

    return launch
