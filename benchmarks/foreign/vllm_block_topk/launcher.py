"""MiniMax M3's prefill index top-k in vLLM
(vllm/models/minimax_m3/common/ops/index_topk.py, v0.34.0: `_topk_index_kernel` with its
bitonic helpers `_bitonic_merge` and `_compare_and_swap`), launched as vLLM's
`minimax_m3_index_topk` launches it, so that its launch choices are knobs.

One program per (query token, request, index head): grid (max_q, reqs, heads), programs
past their request's chunk exit.  Each walks its token's causal block scores in
BLOCK_SIZE_K steps: the step's scores are loaded (masked past the causal window, NaN to
-1e30), the forced init/local blocks lifted to 1e30/1e29, then fully sorted by a bitonic
network of log2(BLOCK_SIZE_K) stages and merged with the running best BLOCK_SIZE_K/2 of the
steps before (one more bitonic merge); at the end the first BLOCK_SIZE_T lanes, found with
a masked sum over a reshape, are the top-k block ids (-1 past the causal count).

vLLM's launch: `@triton.autotune` over six configs keyed on BLOCK_SIZE_T (2048-wide steps
with 8 warps down to 64 with 2, all 2 stages); BLOCK_SIZE_T = next_power_of_2(topk) by
heuristic; sample_interval 1 and block size 128 (MiniMax M3's block_size_q and sparse
block), cu_seqblocks_q = cu_seqlens_q, MASK_INIT and MASK_LOCAL off.  The extracted kernel
is bare: the knobs are the step width, the warps and the stages, None keeping the first
autotune config (2048, 8 warps, 2 stages).  vLLM's per-call output (torch.empty
[heads, total_q, topk] int32) is made in `prepare`.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import torch
import triton

from foreign import _common

LAST_INFO: dict[str, Any] = {}
SPARSE_BLOCK = 128
# the first of `_topk_index_kernel`'s autotune configs
FIRST_BLOCK_K = 2048
FIRST_WARPS = 8
FIRST_STAGES = 2


@dataclass(frozen=True)
class BlockTopkConfig:
    block_k: int | None = None  # None: the first autotune config's 2048
    num_warps: int | None = None  # None: its 8
    num_stages: int | None = None  # None: its 2


def prepare(
    cfg: BlockTopkConfig, score: torch.Tensor, cu: torch.Tensor, prefix_lens: torch.Tensor,
    max_q: int, topk: int, init_blocks: int, local_blocks: int,
) -> Callable[[], torch.Tensor]:  # fmt: skip
    mod = _common.load_source("vllm_block_topk")
    heads, total_q, _ = score.shape
    reqs = cu.numel() - 1
    block_t = triton.next_power_of_2(topk)
    block_k = cfg.block_k or FIRST_BLOCK_K
    if block_k <= block_t:
        raise ValueError(f"block_k {block_k} must exceed next_power_of_2(topk) {block_t}")
    warps = cfg.num_warps or FIRST_WARPS
    stages = cfg.num_stages or FIRST_STAGES
    out = torch.empty((heads, total_q, topk), dtype=torch.int32, device=score.device)
    grid = (max_q, reqs, heads)

    def launch() -> torch.Tensor:
        handle = mod._topk_index_kernel[grid](
            score, out, 1, SPARSE_BLOCK, cu, cu, prefix_lens, topk, init_blocks,
            local_blocks, score.stride(0), score.stride(1), score.stride(2), out.stride(0),
            out.stride(1), out.stride(2), BLOCK_SIZE_K=block_k, BLOCK_SIZE_T=block_t,
            MASK_INIT=False, MASK_LOCAL=False, num_warps=warps, num_stages=stages,
        )  # fmt: skip
        _common.record(
            LAST_INFO, handle, kernels=1, kernel_names=["_topk_index_kernel"],
            block_k=block_k, block_t=block_t, num_warps=warps, num_stages=stages,
            programs=grid[0] * grid[1] * grid[2],
        )  # fmt: skip
        return out

    return launch
