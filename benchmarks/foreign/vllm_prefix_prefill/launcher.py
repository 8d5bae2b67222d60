"""vLLM's prefix-caching prefill attention (vllm/v1/attention/ops/prefix_prefill.py,
v0.34.0: `_fwd_kernel` with its `_paged_kv_cache_offsets` helper), launched as vLLM's
`context_attention_fwd` launches it (no ALiBi, no sinks, no sliding window, a bf16/fp16
cache, causal, dense new K/V), so that its launch choices are knobs.

The grid is (sequences, query heads, cdiv(max new tokens, BLOCK_M)).  Each program loads
BLOCK_M new query rows of one head, then walks the sequence's cached tokens in BLOCK_SIZE
steps: each step looks up the tokens' physical blocks in the block table (a tile may cross
a block), gathers K from the split [blocks, kvheads, head / x, block_size, x] cache as a
[head, BLOCK_SIZE] tile and V from [blocks, kvheads, head, block_size] as [BLOCK_SIZE,
head], with two tl.dots and an online softmax (loop unrolled num_unroll_cache times); then
it walks the new tokens' dense K and V in BLOCK_N steps up to its own rows, causally
(unrolled num_unroll_request times).

vLLM's launch: BLOCK_M = 128, BLOCK_N = 64, BLOCK_SIZE (the cached-token tile) = 32,
num_unroll_cache = 4, num_unroll_request = 1, 4 warps and 1 stage, all fixed in
`context_attention_fwd`; SKIP_DECODE as `chunked_prefill_paged_decode` passes it (True:
one-token sequences are the paged decode kernel's).  Knobs: the three tiles, the warps and
the stages, None keeping vLLM's; the two loop unroll factors stay vLLM's.
vLLM's k_scale and v_scale (read only for an fp8 cache) and its int32 cast of the block
table are made in `prepare`; the output is the caller's, made there too.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import torch
import triton

from foreign import _common

LAST_INFO: dict[str, Any] = {}
VLLM_BLOCK_M = 128
VLLM_BLOCK_N = 64
VLLM_BLOCK_SIZE = 32
VLLM_UNROLL_CACHE = 4
VLLM_UNROLL_REQUEST = 1
VLLM_WARPS = 4
VLLM_STAGES = 1


@dataclass(frozen=True)
class PrefixPrefillConfig:
    block_m: int | None = None  # None: vLLM's 128 new query rows per program
    block_n: int | None = None  # None: vLLM's 64 new keys per step
    block_size: int | None = None  # None: vLLM's 32 cached keys per step
    num_warps: int | None = None  # None: vLLM's 4
    num_stages: int | None = None  # None: vLLM's 1


def prepare(
    cfg: PrefixPrefillConfig, q: torch.Tensor, k: torch.Tensor, v: torch.Tensor,
    k_cache: torch.Tensor, v_cache: torch.Tensor, block_table: torch.Tensor,
    start_loc: torch.Tensor, seq_lens: torch.Tensor, scale: float,
) -> Callable[[], torch.Tensor]:  # fmt: skip
    mod = _common.load_source("vllm_prefix_prefill")
    if k_cache.dim() != 5 or v_cache.dim() != 4:
        raise ValueError("k_cache must be [blocks, kvheads, head / x, bs, x], v_cache 4-D")
    head = q.shape[-1]
    heads, kvheads = q.shape[1], k_cache.shape[1]
    seqs = seq_lens.numel()
    q_lens = (start_loc[1:] - start_loc[:-1]).tolist()
    max_input_len = max(q_lens) if q_lens else 0
    block_m = cfg.block_m or VLLM_BLOCK_M
    block_n = cfg.block_n or VLLM_BLOCK_N
    block_size = cfg.block_size or VLLM_BLOCK_SIZE
    unroll_cache = VLLM_UNROLL_CACHE  # tl.range unroll factors: no catalog role, kept
    unroll_request = VLLM_UNROLL_REQUEST
    warps = cfg.num_warps or VLLM_WARPS
    stages = cfg.num_stages or VLLM_STAGES
    b_loc = block_table.to(torch.int32)  # vLLM's processed_b_loc
    ones = torch.ones(1, dtype=torch.float32, device=q.device)  # k_scale, v_scale
    out = torch.empty_like(q)
    grid = (seqs, heads, triton.cdiv(max_input_len, block_m))

    def launch() -> torch.Tensor:
        handle = mod._fwd_kernel[grid](
            q, k, v, k_cache, v_cache, None, b_loc, scale, ones, ones, 1.0, start_loc,
            seq_lens, k_cache.shape[4], out, b_loc.stride(0), b_loc.stride(1), q.stride(0),
            q.stride(1), q.stride(2), k.stride(0), k.stride(1), k.stride(2), v.stride(0),
            v.stride(1), v.stride(2), out.stride(0), out.stride(1), out.stride(2),
            stride_k_cache_bs=k_cache.stride(0), stride_k_cache_h=k_cache.stride(1),
            stride_k_cache_d=k_cache.stride(2), stride_k_cache_bl=k_cache.stride(3),
            stride_k_cache_x=k_cache.stride(4), stride_v_cache_bs=v_cache.stride(0),
            stride_v_cache_h=v_cache.stride(1), stride_v_cache_d=v_cache.stride(2),
            stride_v_cache_bl=v_cache.stride(3), BLOCK_SIZE=block_size,
            PHYSICAL_BLOCK_SIZE=v_cache.shape[3], num_queries_per_kv=heads // kvheads,
            IN_PRECISION=None, BLOCK_DMODEL=head,
            BLOCK_DMODEL_PADDED=triton.next_power_of_2(head), SLIDING_WINDOW=0,
            SKIP_DECODE=True, USE_FP8=False, BLOCK_M=block_m, BLOCK_N=block_n,
            num_unroll_cache=unroll_cache, num_unroll_request=unroll_request,
            num_warps=warps, num_stages=stages, USE_SINKS=False, INTERLEAVED_V_PACK_FACTOR=0,
            CAUSAL=True, KV_FROM_CACHE=False,
        )  # fmt: skip
        _common.record(
            LAST_INFO, handle, kernels=1, kernel_names=["_fwd_kernel"], block_m=block_m,
            block_n=block_n, block_size=block_size, num_unroll_cache=unroll_cache,
            num_unroll_request=unroll_request, num_warps=warps, num_stages=stages,
            programs=grid[0] * grid[1] * grid[2],
        )  # fmt: skip
        return out

    return launch
