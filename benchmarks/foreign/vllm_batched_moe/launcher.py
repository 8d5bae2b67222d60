"""vLLM's expert-batched MoE GEMM
(vllm/model_executor/layers/fused_moe/experts/fused_batched_moe.py, v0.34.0:
`batched_triton_kernel` with its jit helpers `expert_triton_kernel` and `moe_mmk`),
launched as vLLM's `invoke_moe_batched_triton_kernel` launches it for
`BatchedTritonExperts`' first GEMM (unquantized: hidden -> gate and up projections), so
that its launch choices are knobs.

The grid is (experts, ceil(max_tokens / BLOCK_M) * ceil(n / BLOCK_N)): one program per
expert and (BLOCK_M rows, BLOCK_N columns) tile of that expert's slot.  A program loads its
expert's token count and exits at once when the expert got no tokens or its row tile starts
past the count; otherwise it walks the hidden size in BLOCK_K steps of masked tl.dot (its
rows past the count masked off) against the expert's [BLOCK_K, BLOCK_N] weight tile, fp32
accumulation, and stores the valid rows in the compute dtype.

vLLM's choice (`try_get_optimal_moe_config` with M = max_tokens, the batched buffer's rows,
not the tokens received: no tuned table exists for 16 local experts of width 768, so
`get_default_config`, bf16/fp16): BLOCK_M 16 / 32 / 64 / 128 at max_tokens <= 32 / 96 /
512 / above, BLOCK_N 64 at <= 64 else 128, BLOCK_K 128 at <= 64 else 64, 4 warps at <= 128
else 8, 4 stages at <= 32 else 3 (GROUP_SIZE_M and SPLIT_K are not used by this kernel).
Knobs: the three tiles, warps and stages, None keeping vLLM's.  USE_TD stays off (vLLM turns
the tensor-descriptor loads on for XPU only).  vLLM's workspace is allocated (and zeroed once)
in `prepare`: rows past each count are never written.
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

COMPUTE_TYPE = {torch.bfloat16: tl.bfloat16, torch.float16: tl.float16, torch.float32: tl.float32}


@dataclass(frozen=True)
class BatchedMoeConfig:
    block_m: int | None = None  # None: vLLM's default for max_tokens (16 .. 128)
    block_n: int | None = None  # None: 64 at max_tokens <= 64, else 128
    block_k: int | None = None  # None: 128 at max_tokens <= 64, else 64
    num_warps: int | None = None  # None: 4 at max_tokens <= 128, else 8
    num_stages: int | None = None  # None: 4 at max_tokens <= 32, else 3


def vllm_default_config(max_tokens: int) -> dict[str, int]:
    """vLLM's `get_default_config` for bf16/fp16 (dtype None) on CUDA, M = max_tokens."""
    m = max_tokens
    if m <= 32:
        block_m = 16
    elif m <= 96:
        block_m = 32
    elif m <= 512:
        block_m = 64
    else:
        block_m = 128
    return {
        "BLOCK_SIZE_M": block_m,
        "BLOCK_SIZE_N": 64 if m <= 64 else 128,
        "BLOCK_SIZE_K": 128 if m <= 64 else 64,
        "num_warps": 4 if m <= 128 else 8,
        "num_stages": 4 if m <= 32 else 3,
    }


def prepare(
    cfg: BatchedMoeConfig, a: torch.Tensor, w1: torch.Tensor, expert_num_tokens: torch.Tensor
) -> Callable[[], torch.Tensor]:
    mod = _common.load_source("vllm_batched_moe")
    if a.dim() != 3 or w1.dim() != 3 or w1.shape[0] != a.shape[0] or w1.shape[2] != a.shape[2]:
        raise ValueError("a must be [experts, max_tokens, hidden] and w1 [experts, n, hidden]")
    experts, max_tokens, hidden = a.shape
    n = w1.shape[1]
    base = vllm_default_config(max_tokens)
    bm = cfg.block_m or base["BLOCK_SIZE_M"]
    bn = cfg.block_n or base["BLOCK_SIZE_N"]
    bk = cfg.block_k or base["BLOCK_SIZE_K"]
    warps = cfg.num_warps or base["num_warps"]
    stages = cfg.num_stages or base["num_stages"]
    out = torch.zeros((experts, max_tokens, n), device=a.device, dtype=a.dtype)
    grid = (experts, triton.cdiv(max_tokens, bm) * triton.cdiv(n, bn))
    args = (
        a, w1, out, expert_num_tokens, COMPUTE_TYPE[a.dtype], max_tokens, hidden, n,
        None, None, None,
        a.stride(0), a.stride(1), a.stride(2), w1.stride(0), w1.stride(2), w1.stride(1),
        out.stride(0), out.stride(1), out.stride(2), 0, 0, 0, 0, 0, 0,
        0, 0, False, False, False,
    )  # fmt: skip

    def launch() -> torch.Tensor:
        handle = mod.batched_triton_kernel[grid](
            *args, BLOCK_M=bm, BLOCK_N=bn, BLOCK_K=bk, USE_TD=False, num_warps=warps,
            num_stages=stages,
        )  # fmt: skip
        _common.record(
            LAST_INFO, handle, kernels=1, kernel_names=["batched_triton_kernel"], block_m=bm,
            block_n=bn, block_k=bk, num_warps=warps, num_stages=stages,
            programs=grid[0] * grid[1],
        )  # fmt: skip
        return out

    return launch
