"""vLLM's unified Triton attention (vllm/v1/attention/ops/triton_unified_attention.py,
v0.34.0: `kernel_unified_attention`, the TRITON_ATTN backend's attention), launched as
vLLM's `unified_attention` launches it on CUDA for a batch it runs as 2D (any batch with a
prefill, or a decode batch of more sequences than the backend's 3D threshold, 16 for 8 KV
heads), so that its launch choices are knobs.

One program per (query block, KV head): a block is BLOCK_Q query tokens of one sequence
times the KV head's num_queries_per_kv query heads, BLOCK_M = BLOCK_Q x queries-per-kv rows.
The program finds its sequence by a binary search over the cumulative query lengths, then
walks the sequence's keys in TILE_SIZE steps through the paged block table (each step's
keys and values gathered from the [blocks, block_size, kv_heads, head] caches), S = Q K^T
and P V by tl.dot with an online softmax and the causal mask, and writes its rows.  The
grid has tokens / BLOCK_Q + seqs blocks; those past a sequence's queries exit at once.

vLLM's launch on CUDA (not sm100 with heads of 256): BLOCK_M = 16 (next_power_of_2 of the
queries per KV head above 16), BLOCK_Q = BLOCK_M / queries-per-kv, TILE_SIZE 32 (the 2D
"prefill" tile), Triton's default 4 warps and 3 stages (vLLM passes neither).  Knobs: the
rows per program, the key tile, the warps and the stages, None keeping vLLM's.  No sinks,
alibi, softcap, sliding window, fp8 or KV quantization (their constexpr branches off); the
per-tensor scales vLLM always passes are 1.0 tensors made in `prepare`.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import torch
import triton

from foreign import _common

LAST_INFO: dict[str, Any] = {}
VLLM_TILE_2D = 32
TRITON_DEFAULT_WARPS = 4
TRITON_DEFAULT_STAGES = 3
HELPERS = (
    "cdiv_fn", "apply_softcap", "resolve_seq_and_query_len", "find_seq_idx",
    "init_softmax_M", "compute_tile_loop_bounds", "store_segm_reduce_scalars",
    "compute_kv_seq_mask", "apply_alibi_to_score", "load_qq_bias_tile", "softmax_step",
)  # fmt: skip


@dataclass(frozen=True)
class UnifiedAttentionConfig:
    block_m: int | None = None  # None: vLLM's max(16, next_power_of_2(queries per kv head))
    tile_size: int | None = None  # None: vLLM's 32 (the 2D tile)
    num_warps: int | None = None  # None: Triton's default 4 (vLLM passes none)
    num_stages: int | None = None  # None: Triton's default 3 (vLLM passes none)


def vllm_block_m(queries_per_kv: int) -> int:
    return 16 if queries_per_kv <= 16 else triton.next_power_of_2(queries_per_kv)


def kernel_module() -> Any:
    mod = _common.load_source("vllm_unified_attention")
    helpers = _common.load_source("vllm_attention_helpers")
    # The extracted kernel calls vLLM's attention helpers by global name.
    for name in HELPERS:
        setattr(mod, name, getattr(helpers, name))
    return mod


def prepare(
    cfg: UnifiedAttentionConfig, q: torch.Tensor, k_cache: torch.Tensor,
    v_cache: torch.Tensor, block_table: torch.Tensor, seq_lens: torch.Tensor,
    cu_seqlens_q: torch.Tensor, scale: float,
) -> Callable[[], torch.Tensor]:  # fmt: skip
    mod = kernel_module()
    if q.dim() != 3 or k_cache.dim() != 4 or k_cache.shape != v_cache.shape:
        raise ValueError("q must be [tokens, heads, head], caches [blocks, bs, kvheads, head]")
    tokens, heads, head = q.shape
    block_size, kv_heads = k_cache.shape[1], k_cache.shape[2]
    if heads % kv_heads or k_cache.shape[3] != head:
        raise ValueError("query heads must be a multiple of the KV heads, the same head size")
    qpk = heads // kv_heads
    block_m = cfg.block_m or vllm_block_m(qpk)
    if block_m % qpk:
        raise ValueError(f"block_m {block_m} must be a multiple of {qpk} queries per KV head")
    block_q = block_m // qpk
    tile = cfg.tile_size or VLLM_TILE_2D
    warps = cfg.num_warps or TRITON_DEFAULT_WARPS
    stages = cfg.num_stages or TRITON_DEFAULT_STAGES
    seqs = seq_lens.numel()
    out = torch.empty_like(q)
    one = torch.ones(1, dtype=torch.float32, device=q.device)  # vLLM's layer scales
    grid = (tokens // block_q + seqs, kv_heads)

    def launch() -> torch.Tensor:
        handle = mod.kernel_unified_attention[grid](
            output_ptr=out, query_ptr=q, key_cache_ptr=k_cache, value_cache_ptr=v_cache,
            sink_ptr=None, block_tables_ptr=block_table, seq_lens_ptr=seq_lens,
            alibi_slopes_ptr=None, qq_bias_ptr=None, scale=scale, q_scale=one, k_scale=one,
            v_scale=one, out_scale=1.0, softcap=0, num_query_heads=heads,
            num_queries_per_kv=qpk, block_table_stride=block_table.stride(0),
            query_stride_0=q.stride(0), query_stride_1=q.stride(1),
            output_stride_0=out.stride(0), output_stride_1=out.stride(1),
            qq_bias_stride_0=0, BLOCK_SIZE=block_size, TILE_SIZE=tile, HEAD_SIZE=head,
            HEAD_SIZE_PADDED=triton.next_power_of_2(head), USE_ALIBI_SLOPES=False,
            USE_ALIBI_SQRT=False, USE_QQ_BIAS=False, USE_SOFTCAP=False, USE_SINKS=False,
            SLIDING_WINDOW=0, USE_CAUSAL=True, USE_PER_SEQ_CAUSAL=False,
            per_seq_causal_ptr=None, USE_MM_PREFIX=False, MAX_MM_RANGES=0,
            mm_prefix_range_ptr=None, rswa_prefix_lens_ptr=seq_lens, R_SWA_WINDOW=0,
            USE_R_SWA=False,
            stride_k_cache_0=k_cache.stride(0), stride_k_cache_1=k_cache.stride(1),
            stride_k_cache_2=k_cache.stride(2), stride_k_cache_3=k_cache.stride(3),
            stride_v_cache_0=v_cache.stride(0), stride_v_cache_1=v_cache.stride(1),
            stride_v_cache_2=v_cache.stride(2), stride_v_cache_3=v_cache.stride(3),
            query_start_len_ptr=cu_seqlens_q, BLOCK_Q=block_q, num_seqs=seqs,
            BLOCK_M=block_m, NUM_SEGMENTS_PER_SEQ=1, USE_FP8=False, IS_3D=False,
            KV_QUANT_MODE=0, Q_IS_FP8=False, CHUNK_LOOKBACK=-1, CHUNK_SIZE=-1,
            USE_TD=False, USE_TD_QO=False, MM_PREFIX_CLAMP_SW=False,
            num_warps=warps, num_stages=stages,
        )  # fmt: skip
        _common.record(
            LAST_INFO, handle, kernels=1, kernel_names=["kernel_unified_attention"],
            block_m=block_m, block_q=block_q, tile_size=tile, num_warps=warps,
            num_stages=stages, programs=grid[0] * grid[1],
        )  # fmt: skip
        return out

    return launch
