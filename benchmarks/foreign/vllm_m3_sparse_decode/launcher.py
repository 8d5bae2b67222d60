"""MiniMax M3's block-sparse GQA decode (vllm/models/minimax_m3/common/ops/sparse_attn.py,
v0.34.0: `_gqa_sparse_decode_kernel`, `_merge_topk_attn_out_kernel`), launched as vLLM's
`minimax_m3_sparse_attn_decode` launches them on Hopper (a bf16/fp16 cache: no FP8, no KV
scales), so that their launch choices are knobs.

Split launch, grid (tokens x NUM_TOPK_CHUNKS, KV heads): a program takes one query token
and all `group` query heads of one KV head as the rows of a [BLOCK_SIZE_H, head_dim] tile
(BLOCK_SIZE_H = max(16, next_pow2(group)): the tl.dot's M) and one chunk of the token's
top-k list (ceil(topk / chunks) entries, cut at the token's causal block count): per entry
it looks the page up in the block table, loads K [head_dim, 128] and V [128, head_dim]
from the page's packed [128, 2 x head_dim] rows (positions past the token masked, a -1 or
future entry made a neutral update), and updates an online base-2 softmax with two
tl.dots; it stores the chunk's output in the dtype and its base-2 log-sum-exp in fp32 (an
empty chunk: zeros and -inf).  Merge launch, grid (tokens, heads): the chunks' partials
weighted by exp2(lse - max) and summed into the output.  On Hopper and later vLLM sets
USE_PDL and launch_pdl (a programmatic-dependent-launch wait at the top of both); the same
here on a CUDA device of compute capability 9 or more, off elsewhere.

vLLM's launch: NUM_TOPK_CHUNKS = the largest power of two <= max(1, min(topk, 256 //
(tokens x KV heads))) ("chunk count is shape-constant (cuda graph)": about 256 split
programs), 128-key blocks (the page: not a choice), BLOCK_SIZE_H and BLOCK_SIZE_D from the
kernels' @triton.heuristics (dropped by the fetch, passed here as they compute them),
Triton's default 4 warps and 3 stages for both launches (vLLM passes none), the merge
launched even with one chunk.  Knobs: the chunk count (a power of two: the merge's
tl.arange), the split launch's warps and stages and the merge's warps, None keeping
vLLM's.  vLLM's per-call partial buffers (o_partial in the dtype, lse_partial in fp32)
and its transposed view of the indexer's buffer are made in `prepare`; the output is the
caller's, made there too.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import torch
import triton

from foreign import _common

LAST_INFO: dict[str, Any] = {}
SPARSE_BLOCK_SIZE = 128
VLLM_TARGET_GRID = 256  # minimax_m3_sparse_attn_decode's TARGET_GRID
TRITON_DEFAULT_WARPS = 4
TRITON_DEFAULT_STAGES = 3


@dataclass(frozen=True)
class SparseDecodeConfig:
    splits: int | None = None  # None: vLLM's chunk count (about 256 split programs)
    num_warps: int | None = None  # None: Triton's default 4 (split launch; vLLM passes none)
    num_stages: int | None = None  # None: Triton's default 3 (vLLM passes none)
    merge_warps: int | None = None  # None: Triton's default 4 (merge launch)


def vllm_splits(tokens: int, kv_heads: int, max_topk: int) -> int:
    """`minimax_m3_sparse_attn_decode`'s num_topk_chunks (pure Python, v0.34.0)."""
    target = max(1, min(max_topk, VLLM_TARGET_GRID // max(1, tokens * kv_heads)))
    return 1 << (target.bit_length() - 1)


def vllm_pdl(device: torch.device) -> bool:
    """vLLM's `current_platform.is_arch_support_pdl()`: CUDA at compute capability 9+."""
    if device.type != "cuda":
        return False
    return torch.cuda.get_device_capability(device)[0] >= 9


def prepare(
    cfg: SparseDecodeConfig, q: torch.Tensor, kv_cache: torch.Tensor, topk: torch.Tensor,
    block_table: torch.Tensor, seq_lens: torch.Tensor, q_len: int, sm_scale: float,
) -> Callable[[], torch.Tensor]:  # fmt: skip
    mod = _common.load_source("vllm_m3_sparse_decode")
    if kv_cache.dim() != 4 or kv_cache.shape[2] != SPARSE_BLOCK_SIZE:
        raise ValueError("kv_cache must be [pages, kv_heads, 128, 2 x head_dim]")
    total_q, num_heads, head_dim = q.shape
    num_kv_heads = kv_cache.shape[1]
    if total_q != seq_lens.shape[0] * q_len or num_heads % num_kv_heads:
        raise ValueError("q must be [reqs x q_len, kv_heads x group, head_dim] (vLLM asserts)")
    group = num_heads // num_kv_heads
    t = topk.transpose(0, 1)  # vLLM: topk_buffer[:num_tokens].transpose(0, 1)[:, :nd, :]
    max_topk = t.shape[-1]
    splits = cfg.splits or vllm_splits(total_q, num_kv_heads, max_topk)
    if splits & (splits - 1):
        raise ValueError(f"the chunk count {splits} must be a power of two (the merge's arange)")
    warps = cfg.num_warps or TRITON_DEFAULT_WARPS
    stages = cfg.num_stages or TRITON_DEFAULT_STAGES
    merge_warps = cfg.merge_warps or TRITON_DEFAULT_WARPS
    block_h = max(16, triton.next_power_of_2(group))  # the split kernel's heuristic
    block_d = triton.next_power_of_2(head_dim)  # both kernels' heuristic
    pdl = vllm_pdl(q.device)
    pdl_launch = {"launch_pdl": True} if pdl else {}
    output = torch.empty_like(q)
    o_partial = torch.empty(splits, total_q, num_heads, head_dim, dtype=q.dtype, device=q.device)
    lse_partial = torch.empty(splits, total_q, num_heads, dtype=torch.float32, device=q.device)
    grid = (total_q * splits, num_kv_heads)
    merge_grid = (total_q, num_heads)
    # vLLM passes the output as both (unused) KV-scale pointers when the cache is not FP8
    args = (
        q, kv_cache, output, output, t, o_partial, lse_partial, block_table, seq_lens,
        total_q, group, head_dim, max_topk, sm_scale, q_len, q.stride(0), q.stride(1),
        q.stride(2), kv_cache.stride(0), kv_cache.stride(1), kv_cache.stride(2),
        kv_cache.stride(3), 0, 0, 0, 0, t.stride(0), t.stride(1), t.stride(2),
        o_partial.stride(0), o_partial.stride(1), o_partial.stride(2), o_partial.stride(3),
        lse_partial.stride(0), lse_partial.stride(1), lse_partial.stride(2),
        block_table.stride(0),
    )  # fmt: skip
    merge_args = (
        o_partial, lse_partial, output, head_dim, o_partial.stride(0), o_partial.stride(1),
        o_partial.stride(2), o_partial.stride(3), lse_partial.stride(0),
        lse_partial.stride(1), lse_partial.stride(2), output.stride(0), output.stride(1),
        output.stride(2),
    )  # fmt: skip

    def launch() -> torch.Tensor:
        handle = mod._gqa_sparse_decode_kernel[grid](
            *args, BLOCK_SIZE_K=SPARSE_BLOCK_SIZE, NUM_TOPK_CHUNKS=splits,
            BLOCK_SIZE_H=block_h, BLOCK_SIZE_D=block_d, USE_FP8=False, KV_SCALE_MODE=0,
            USE_PDL=pdl, num_warps=warps, num_stages=stages, **pdl_launch,
        )  # fmt: skip
        mod._merge_topk_attn_out_kernel[merge_grid](
            *merge_args, NUM_TOPK_CHUNKS=splits, BLOCK_SIZE_D=block_d, USE_PDL=pdl,
            num_warps=merge_warps, **pdl_launch,
        )  # fmt: skip
        _common.record(
            LAST_INFO, handle, kernels=2,
            kernel_names=["_gqa_sparse_decode_kernel", "_merge_topk_attn_out_kernel"],
            splits=splits, block_h=block_h, block_k=SPARSE_BLOCK_SIZE, num_warps=warps,
            num_stages=stages, merge_warps=merge_warps, programs=grid[0] * grid[1],
            launch_pdl=pdl, metrics={"num_splits": splits},
        )  # fmt: skip
        return output

    return launch
