"""SGLang's fused MoE GEMM (python/sglang/srt/layers/moe/fused_moe_triton/
fused_moe_triton_kernels.py, v0.5.9), launched by our copy of SGLang's
`invoke_fused_moe_kernel` (bf16, no quantization, the first of the MoE layer's two GEMMs:
hidden -> gate and up projections of every routed (token, expert) pair) so that its launch
choices are knobs.

The token-expert assignments are sorted by expert and each expert's list padded to a
multiple of BLOCK_SIZE_M (`moe_align_block_size`, a CUDA kernel of sgl_kernel in SGLang,
done here in torch in `prepare`, outside the timed call, like SGLang's per-layer routing).
One program per (BLOCK_SIZE_M sorted assignments, BLOCK_SIZE_N output columns), ordered in
GROUP_SIZE_M groups of row blocks, gathers its tokens' rows of the hidden states and loops
over the hidden size in BLOCK_SIZE_K steps of tl.dot against its expert's weight tile;
programs past the padded total exit at once.

SGLang's choice when no tuned table matches the expert count, width, device and Triton
version (`get_default_config`, bf16; v0.5.9 ships no H200 table for E=64, N=1408 under any
Triton version it searches): 64 x 64 x 32 tiles, GROUP_SIZE_M 8 above E tokens, 16 x 32 x
64 and GROUP_SIZE_M 1 at E tokens or fewer; num_warps and num_stages not given, so Triton's
defaults 4 and 3.  Knobs: the three tile sizes, the grouping, warps and stages, None keeping
SGLang's.  SGLang's intermediate cache is allocated here in `prepare`.
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
TRITON_DEFAULT_WARPS = 4
TRITON_DEFAULT_STAGES = 3


@dataclass(frozen=True)
class FusedMoeConfig:
    block_m: int | None = None  # None: SGLang's default, 64 (16 at tokens <= experts)
    block_n: int | None = None  # None: 64 (32 at tokens <= experts)
    block_k: int | None = None  # None: 32 (64 at tokens <= experts)
    group_m: int | None = None  # None: 8 (1 at tokens <= experts)
    num_warps: int | None = None  # None: Triton's default 4 (SGLang passes none)
    num_stages: int | None = None  # None: Triton's default 3


def sglang_default_config(tokens: int, experts: int) -> dict[str, int]:
    """SGLang's `get_default_config` for an unquantized MoE (fused_moe_triton_config.py)."""
    if tokens <= experts:
        return {"BLOCK_SIZE_M": 16, "BLOCK_SIZE_N": 32, "BLOCK_SIZE_K": 64, "GROUP_SIZE_M": 1}
    return {"BLOCK_SIZE_M": 64, "BLOCK_SIZE_N": 64, "BLOCK_SIZE_K": 32, "GROUP_SIZE_M": 8}


def align_block_size(
    topk_ids: torch.Tensor, block_size: int, experts: int
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """What SGLang's `moe_align_block_size` returns, in torch: the assignment ids (token *
    topk + slot) sorted by expert, each expert's run padded with the id `numel` to a multiple
    of `block_size`; the expert of each block; the padded total (a one-element tensor).
    The buffers have SGLang's sizes, so the grid is SGLang's."""
    numel = topk_ids.numel()
    if numel < experts + 1:
        max_padded = numel * block_size
    else:
        max_padded = numel + (experts + 1) * (block_size - 1)
    return sort_by_expert_padded(topk_ids, block_size, experts, max_padded)


def sort_by_expert_padded(
    topk_ids: torch.Tensor, block_size: int, experts: int, max_padded: int
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """The body every `moe_align_block_size` shares, whatever its buffer: the assignment ids
    sorted by expert (stable), each expert's run padded with the id `numel` to a multiple of
    `block_size` in a buffer of `max_padded` entries; each block's expert (0 past the used
    blocks); the padded total (one int32)."""
    flat = topk_ids.flatten().long()
    numel = flat.numel()
    counts = torch.bincount(flat, minlength=experts)
    padded = (counts + block_size - 1) // block_size * block_size
    order = torch.argsort(flat, stable=True)
    sorted_experts = flat[order]
    first_sorted = torch.cumsum(counts, 0) - counts
    first_padded = torch.cumsum(padded, 0) - padded
    rank = torch.arange(numel, device=flat.device) - first_sorted[sorted_experts]
    sorted_ids = torch.full((max_padded,), numel, dtype=torch.int32, device=flat.device)
    sorted_ids[first_padded[sorted_experts] + rank] = order.to(torch.int32)
    blocks = triton.cdiv(max_padded, block_size)
    expert_ids = torch.zeros((blocks,), dtype=torch.int32, device=flat.device)
    used = torch.repeat_interleave(torch.arange(experts, device=flat.device), padded // block_size)
    expert_ids[: used.numel()] = used.to(torch.int32)
    total = padded.sum().reshape(1).to(torch.int32)
    return sorted_ids, expert_ids, total


def prepare(
    cfg: FusedMoeConfig, x: torch.Tensor, w1: torch.Tensor, topk_ids: torch.Tensor
) -> Callable[[], torch.Tensor]:
    mod = _common.load_source("sglang_fused_moe")
    if x.dim() != 2 or w1.dim() != 3 or w1.shape[2] != x.shape[1]:
        raise ValueError("x must be [tokens, hidden] and w1 [experts, n, hidden]")
    tokens, hidden = x.shape
    experts, n, _ = w1.shape
    topk = topk_ids.shape[1]
    base = sglang_default_config(tokens, experts)
    bm, bn, bk, gm, warps, stages = _common.gemm_tiles(
        cfg, base, TRITON_DEFAULT_WARPS, TRITON_DEFAULT_STAGES
    )
    sorted_ids, expert_ids, total = align_block_size(topk_ids, bm, experts)
    # SGLang passes the routing weights even when the first GEMM does not multiply by them
    topk_weights = torch.ones(topk_ids.shape, device=x.device, dtype=torch.float32)
    out = torch.empty((tokens * topk, n), device=x.device, dtype=x.dtype)
    compute_type = tl.bfloat16 if x.dtype == torch.bfloat16 else tl.float16
    grid = (triton.cdiv(sorted_ids.shape[0], bm) * triton.cdiv(n, bn),)
    args = (
        x, None, w1, None, None, out, None, None, topk_weights, sorted_ids, expert_ids, total,
        n, hidden, sorted_ids.shape[0], topk_ids.numel(),
        x.stride(0), x.stride(1), w1.stride(0), w1.stride(2), w1.stride(1), 0, 0,
        out.stride(-2), out.stride(-1), 0, 0, 0, 0, 0, 0, 0,
    )  # fmt: skip

    def launch() -> torch.Tensor:
        handle = mod.fused_moe_kernel[grid](
            *args, BLOCK_SIZE_M=bm, BLOCK_SIZE_N=bn, BLOCK_SIZE_K=bk, GROUP_SIZE_M=gm,
            MUL_ROUTED_WEIGHT=False, top_k=topk, compute_type=compute_type,
            use_fp8_w8a8=False, use_int8_w8a8=False, use_int8_w8a16=False,
            per_channel_quant=False, even_Ks=hidden % bk == 0, c_sorted=False,
            filter_expert=True, swap_ab=False, num_warps=warps, num_stages=stages,
        )  # fmt: skip
        _common.record(
            LAST_INFO, handle, kernels=1, kernel_names=["fused_moe_kernel"], block_m=bm,
            block_n=bn, block_k=bk, group_m=gm, num_warps=warps, num_stages=stages,
            programs=grid[0],
        )  # fmt: skip
        return out

    return launch
