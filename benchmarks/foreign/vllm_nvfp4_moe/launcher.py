"""vLLM's NVFP4 emulation MoE GEMM (vllm/model_executor/layers/fused_moe/experts/
nvfp4_emulation_moe.py, v0.34.0: `fused_moe_nvfp4_emulation_kernel`, with `_e2m1_inline`
from quantization/utils/nvfp4_emulation_utils.py and `write_zeros_to_output` from
fused_moe.py), launched as `invoke_fused_moe_nvfp4_emulation_kernel` launches it for the
first of the layer's two GEMMs (hidden -> gate and up) in
`Nvfp4QuantizationEmulationTritonExperts.apply`, so that its launch choices are knobs.

The experts of an NVFP4 checkpoint (ModelOpt's: two E2M1 weights a byte along the hidden
size, one e4m3 scale per 16 of them, one fp32 global scale per expert) stay packed; the
activations come in already rounded to NVFP4 and back (`vllm_nvfp4_qdq`, not timed here).
The token-expert assignments are sorted by expert and each expert's run padded to a
multiple of BLOCK_SIZE_M (`moe_align_block_size`, vLLM's CUDA op, done here in torch in
`prepare`, outside the timed call).  One program per (BLOCK_SIZE_M sorted assignments,
BLOCK_SIZE_N output columns), ordered in GROUP_SIZE_M groups of row blocks: it exits at once
past the padded total (and zero-fills its tile for a block of an expert off the rank, -1,
which needs expert parallelism: not here); otherwise it gathers its tokens' rows and walks
the hidden size in BLOCK_SIZE_K steps, each loading a [BLOCK_SIZE_N, BLOCK_SIZE_K / 2] tile
of packed bytes and the matching [BLOCK_SIZE_N, BLOCK_SIZE_K / 2] e4m3 scales (one load
per byte, eight bytes a scale), splitting the nibbles, decoding each into fp32 by bit
construction (a shift, an add and a bitcast, then selects for zero, the subnormal 0.5 and
the sign), scaling by the block scale times the expert's global scale, interleaving the
two halves, transposing to [BLOCK_SIZE_K, BLOCK_SIZE_N] and casting to the compute type
before one tl.dot into fp32; the tile is cast and stored into vLLM's [tokens, topk, n]
intermediate cache.

vLLM's choice (`try_get_optimal_moe_config`): its tuned-table lookup keys on w2's shape,
whose last dimension is the packed intermediate size (half the expert's intermediate size
on the rank: 128 for DeepSeek-R1 at TP8), and on the unquantized dtype string; no table
exists for E = 256, N = 128 on an H100 or H200 (nor for this check's tiny shapes), so
`get_default_config`'s bf16 branch, by tokens M: BLOCK_SIZE_M 16 / 32 / 64 / 128 at M <=
32 / 96 / 512 / above, BLOCK_SIZE_N 64 at M <= 64 else 128, BLOCK_SIZE_K 128 at M <= 64
else 64, GROUP_SIZE_M 16 above 128 tokens per expert (M // experts) else 1.  The config's
num_warps and num_stages are not passed by the invoke, so Triton's defaults, 4 warps and 3
stages, run.  Knobs: the three tiles, the grouping, warps and stages, None keeping vLLM's.
vLLM's intermediate cache is allocated here in `prepare`.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import torch
import triton
import triton.language as tl

from foreign import _common
from foreign.sglang_fused_moe.launcher import sort_by_expert_padded

LAST_INFO: dict[str, Any] = {}
TRITON_DEFAULT_WARPS = 4
TRITON_DEFAULT_STAGES = 3
NVFP4_GROUP = 16  # the invoke's group_size: one e4m3 scale per 16 weights
COMPUTE_TYPE = {torch.bfloat16: tl.bfloat16, torch.float16: tl.float16, torch.float32: tl.float32}


@dataclass(frozen=True)
class Nvfp4MoeConfig:
    block_m: int | None = None  # None: vLLM's default for M tokens (16, 32, 64, 128)
    block_n: int | None = None  # None: 64 at M <= 64, else 128
    block_k: int | None = None  # None: 128 at M <= 64, else 64
    group_m: int | None = None  # None: 16 above 128 tokens per expert, else 1
    num_warps: int | None = None  # None: Triton's default 4 (the invoke passes none)
    num_stages: int | None = None  # None: Triton's default 3


def vllm_default_config(tokens: int, experts: int) -> dict[str, int]:
    """vLLM's `get_default_config` for an unquantized dtype string (None) on CUDA, the
    tiles and grouping only: the invoke passes no num_warps or num_stages."""
    if tokens <= 32:
        block_m = 16
    elif tokens <= 96:
        block_m = 32
    elif tokens <= 512:
        block_m = 64
    else:
        block_m = 128
    return {
        "BLOCK_SIZE_M": block_m,
        "BLOCK_SIZE_N": 64 if tokens <= 64 else 128,
        "BLOCK_SIZE_K": 128 if tokens <= 64 else 64,
        "GROUP_SIZE_M": 16 if tokens // max(experts, 1) > 128 else 1,
    }


def align_block_size(
    topk_ids: torch.Tensor, block_size: int, experts: int
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """What vLLM's `moe_align_block_size` returns without expert parallelism, in torch:
    the assignment ids (token * topk + slot) grouped by expert, each expert's run padded with
    the id `numel` to a multiple of `block_size`, in vLLM's buffer of numel + experts x
    (block_size - 1) entries (numel x block_size if smaller, at fewer assignments than
    experts); each block's expert (0 past the used blocks, whose programs exit before
    reading it); the padded total (one int32)."""
    numel = topk_ids.numel()
    max_padded = numel + experts * (block_size - 1)
    if numel < experts:
        max_padded = min(numel * block_size, max_padded)
    return sort_by_expert_padded(topk_ids, block_size, experts, max_padded)


def prepare(
    cfg: Nvfp4MoeConfig, x: torch.Tensor, w1: torch.Tensor, w1_scale: torch.Tensor,
    w1_global_scale: torch.Tensor, topk_ids: torch.Tensor,
) -> Callable[[], torch.Tensor]:  # fmt: skip
    mod = _common.load_source("vllm_nvfp4_moe")
    # The extracted kernel calls both helpers by global name, as its module imports them.
    mod._e2m1_inline = _common.load_source("vllm_nvfp4_e2m1")._e2m1_inline
    mod.write_zeros_to_output = _common.load_source("vllm_moe_write_zeros").write_zeros_to_output
    if x.dim() != 2 or w1.dim() != 3 or 2 * w1.shape[2] != x.shape[1]:
        raise ValueError("x must be [tokens, hidden] and w1 [experts, n, hidden / 2] uint8")
    tokens, hidden = x.shape
    experts, n, _ = w1.shape
    if w1_scale.shape != (experts, n, hidden // NVFP4_GROUP) or w1_global_scale.shape != (
        experts,
    ):  # fmt: skip
        raise ValueError("w1_scale must be [experts, n, hidden / 16], w1_global_scale [experts]")
    topk = topk_ids.shape[1]
    base = vllm_default_config(tokens, experts)
    bm, bn, bk, gm, warps, stages = _common.gemm_tiles(
        cfg, base, TRITON_DEFAULT_WARPS, TRITON_DEFAULT_STAGES
    )
    sorted_ids, expert_ids, total = align_block_size(topk_ids, bm, experts)
    em = sorted_ids.shape[0]
    if tokens < bm:  # the invoke's bound on the rows a small batch can fill
        em = min(em, tokens * topk * bm)
    out = torch.empty((tokens, topk, n), device=x.device, dtype=x.dtype)
    grid = (triton.cdiv(em, bm) * triton.cdiv(n, bn),)
    # B [E, N, K / 2] and its scales [E, N, K / 16] go in with the N and K strides swapped,
    # as the invoke passes them; topk_weights is None for the first GEMM
    args = (
        x, w1, out, w1_scale, w1_global_scale, None, sorted_ids, expert_ids, total,
        n, hidden, em, topk_ids.numel(), x.stride(0), x.stride(1),
        w1.stride(0), w1.stride(2), w1.stride(1), out.stride(1), out.stride(2),
        w1_scale.stride(0), w1_scale.stride(2), w1_scale.stride(1),
    )  # fmt: skip

    def launch() -> torch.Tensor:
        handle = mod.fused_moe_nvfp4_emulation_kernel[grid](
            *args, block_k_diviable=hidden % bk == 0, MUL_ROUTED_WEIGHT=False, top_k=topk,
            compute_type=COMPUTE_TYPE[x.dtype], group_size=NVFP4_GROUP, BLOCK_SIZE_M=bm,
            BLOCK_SIZE_N=bn, BLOCK_SIZE_K=bk, GROUP_SIZE_M=gm, num_warps=warps,
            num_stages=stages,
        )  # fmt: skip
        _common.record(
            LAST_INFO, handle, kernels=1, kernel_names=["fused_moe_nvfp4_emulation_kernel"],
            block_m=bm, block_n=bn, block_k=bk, group_m=gm, num_warps=warps,
            num_stages=stages, programs=grid[0],
        )  # fmt: skip
        return out

    return launch
