"""SGLang's MoE top-k sum reduction (python/sglang/srt/layers/moe/fused_moe_triton/
fused_moe_triton_kernels.py, v0.5.9, modified there from LightLLM: `_moe_sum_reduce_kernel`),
launched by our copy of SGLang's `moe_sum_reduce_triton` so that its launch choices are
knobs.

The last step of an MoE layer on SGLang's Triton runner (CUDA, more than 32 tokens, top-k
above 2 or a routed scaling factor): the down projection leaves a [tokens, topk, hidden]
intermediate, one row per (token, expert) pair, already router-weighted; this kernel sums
each token's top-k rows in fp32, multiplies by the routed scaling factor (a constexpr) and
writes [tokens, hidden] in the input dtype.  One program per (BLOCK_M tokens, BLOCK_DIM
columns) tile loops over the top-k (a tl.range with NUM_STAGE stages), each step loading a
BLOCK_M x BLOCK_DIM tile.  SGLang's choices: BLOCK_M = 1, BLOCK_DIM = 2048, NUM_STAGE = 1,
num_warps = 16.  Knobs: `block_m`, `block_dim`, `num_stages` (the loop's NUM_STAGE; the
kernel has no other loop), `num_warps`, None keeping SGLang's.

SGLang writes into the layer's preallocated output; here it is allocated in `prepare`,
outside the timed call.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import torch
import triton

from foreign import _common

LAST_INFO: dict[str, Any] = {}
SGLANG_BLOCK_M = 1
SGLANG_BLOCK_DIM = 2048
SGLANG_STAGES = 1
SGLANG_WARPS = 16


@dataclass(frozen=True)
class MoeSumReduceConfig:
    block_m: int | None = None  # None: SGLang's 1
    block_dim: int | None = None  # None: SGLang's 2048
    num_stages: int | None = None  # None: SGLang's 1 (the top-k loop's NUM_STAGE)
    num_warps: int | None = None  # None: SGLang's 16


def prepare(
    cfg: MoeSumReduceConfig, x: torch.Tensor, routed_scaling_factor: float
) -> Callable[[], torch.Tensor]:
    mod = _common.load_source("sglang_moe_sum_reduce")
    if x.dim() != 3 or not x.is_contiguous():
        raise ValueError("x must be a contiguous [tokens, topk, hidden] tensor")
    tokens, topk, hidden = x.shape
    out = torch.empty(tokens, hidden, device=x.device, dtype=x.dtype)
    bm = cfg.block_m or SGLANG_BLOCK_M
    bd = cfg.block_dim or SGLANG_BLOCK_DIM
    stages = cfg.num_stages or SGLANG_STAGES
    warps = cfg.num_warps or SGLANG_WARPS
    grid = (triton.cdiv(tokens, bm), triton.cdiv(hidden, bd))

    def launch() -> torch.Tensor:
        handle = mod._moe_sum_reduce_kernel[grid](
            x, *x.stride(), out, *out.stride(), token_num=tokens, topk_num=topk,
            hidden_dim=hidden, routed_scaling_factor=routed_scaling_factor, BLOCK_M=bm,
            BLOCK_DIM=bd, NUM_STAGE=stages, num_warps=warps,
        )  # fmt: skip
        _common.record(
            LAST_INFO, handle, kernels=1, kernel_names=["_moe_sum_reduce_kernel"], block_m=bm,
            block_dim=bd, num_stages=stages, num_warps=warps, programs=grid[0] * grid[1],
        )  # fmt: skip
        return out

    return launch
