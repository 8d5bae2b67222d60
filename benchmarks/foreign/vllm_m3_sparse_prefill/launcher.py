"""MiniMax M3's Hopper query-tiled block-sparse GQA prefill
(vllm/models/minimax_m3/nvidia/ops/sparse_prefill.py, v0.34.0:
`_gqa_sparse_fwd_tiled_kernel`), launched as vLLM's `minimax_m3_sparse_attn` launches it
(a bf16/fp16 cache: no FP8, no KV scales), so that its launch choices are knobs.

The grid is (cdiv(max query length, BLOCK_SIZE_Q), KV heads, requests).  Each program
takes BLOCK_SIZE_Q consecutive query tokens of one request and all `group` query heads of
one KV head as one [BLOCK_SIZE_Q x group, head_dim] tile, loads the tile's top-k block ids
(per token, at most its causal block count; -1 dropped), and walks the union of those ids
in ascending order (a tl.min over the remaining ids each step, a while loop): per block it
looks the page up in the block table, loads K [head_dim, 128] and V [128, head_dim] from
the page's packed [128, 2 x head_dim] rows, masks the rows of tokens that did not select
the block and the causal part, and updates an online softmax with two tl.dots.

vLLM's launch: BLOCK_SIZE_Q = 16 (`_PREFILL_TILE_Q`, "tuned on H200"), BLOCK_SIZE_K =
128 (the page: not a choice), num_warps = min(16, max(4, 16 x next_pow2(group) // 16))
(16 at MiniMax M3's 16 query heads per KV head), Triton's default 3 stages (vLLM passes
none; the block walk is a while loop, which Triton does not software-pipeline).  Knobs:
the query tile, the warps and the stages, None keeping vLLM's (the warps by vLLM's formula
over the chosen tile).  vLLM's transposed view of the indexer's [tokens, heads, topk]
buffer is taken in `prepare`; the output is the caller's, made there too.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import torch
import triton

from foreign import _common

LAST_INFO: dict[str, Any] = {}
VLLM_TILE_Q = 16  # _PREFILL_TILE_Q
SPARSE_BLOCK_SIZE = 128
TRITON_DEFAULT_STAGES = 3


def vllm_warps(tile_q: int, group: int) -> int:
    """`minimax_m3_sparse_attn`'s warps: a warp per 16 rows of the tile, 4 to 16."""
    return min(16, max(4, tile_q * triton.next_power_of_2(group) // 16))


@dataclass(frozen=True)
class SparsePrefillConfig:
    tile_q: int | None = None  # None: vLLM's 16 query tokens per program
    num_warps: int | None = None  # None: vLLM's formula (16 at 16 x 16 rows)
    num_stages: int | None = None  # None: Triton's default 3 (vLLM passes none)


def prepare(
    cfg: SparsePrefillConfig, q: torch.Tensor, kv_cache: torch.Tensor, topk: torch.Tensor,
    block_table: torch.Tensor, cu_seqlens_q: torch.Tensor, seq_lens: torch.Tensor,
    prefix_lens: torch.Tensor, max_query_len: int, sm_scale: float,
) -> Callable[[], torch.Tensor]:  # fmt: skip
    mod = _common.load_source("vllm_m3_sparse_prefill")
    if kv_cache.dim() != 4 or kv_cache.shape[2] != SPARSE_BLOCK_SIZE:
        raise ValueError("kv_cache must be [pages, kv_heads, 128, 2 x head_dim]")
    _, num_heads, head_dim = q.shape
    num_kv_heads = kv_cache.shape[1]
    batch = cu_seqlens_q.shape[0] - 1
    group = num_heads // num_kv_heads
    t = topk.transpose(0, 1)  # vLLM: topk_buffer[:num_tokens].transpose(0, 1)
    max_topk = t.shape[-1]
    out = torch.empty_like(q)
    tile_q = cfg.tile_q or VLLM_TILE_Q
    warps = cfg.num_warps or vllm_warps(tile_q, group)
    stages = cfg.num_stages or TRITON_DEFAULT_STAGES
    grid = (triton.cdiv(max_query_len, tile_q), num_kv_heads, batch)

    def launch() -> torch.Tensor:
        handle = mod._gqa_sparse_fwd_tiled_kernel[grid](
            q, kv_cache, out, out, t, out, block_table, cu_seqlens_q, seq_lens, prefix_lens,
            group, head_dim, max_topk, sm_scale, q.stride(0), q.stride(1), q.stride(2),
            kv_cache.stride(0), kv_cache.stride(1), kv_cache.stride(2), kv_cache.stride(3),
            0, 0, 0, 0, t.stride(0), t.stride(1), t.stride(2), out.stride(0), out.stride(1),
            out.stride(2), block_table.stride(0), BLOCK_SIZE_Q=tile_q,
            BLOCK_SIZE_K=SPARSE_BLOCK_SIZE, USE_FP8=False, KV_SCALE_MODE=0,
            num_warps=warps, num_stages=stages,
        )  # fmt: skip
        _common.record(
            LAST_INFO, handle, kernels=1, kernel_names=["_gqa_sparse_fwd_tiled_kernel"],
            tile_q=tile_q, block_k=SPARSE_BLOCK_SIZE, num_warps=warps, num_stages=stages,
            programs=grid[0] * grid[1] * grid[2],
        )  # fmt: skip
        return out

    return launch
