"""vLLM's TurboQuant decode attention (vllm/v1/attention/ops/triton_turboquant_decode.py,
v0.34.0: `_tq_decode_stage1`; its merge `_fwd_kernel_stage2` from
vllm/v1/attention/ops/triton_decode_attention.py), launched as vLLM's
`triton_turboquant_decode_attention` launches them, so that their launch choices are knobs.

Stage 1: one program per (request, query head, KV split) walks its split of the request's
tokens BLOCK_KV at a time: the pages from the block table, then for each token of the tile
its KV head's packed slot: the key's bucket indices unpacked from 16-bit windows of bytes,
the centroids gathered, scaled to unit norm (norm correction), dotted with the rotated
query row and multiplied by the fp16 norm read as two bytes (one query row: no tensor
cores); an online softmax; the value's indices unpacked the same way, times the fp16
scale plus the fp16 zero, accumulated.  It stores its normalised partial output and
log-sum-exp in fp32.  Stage 2: one program per (request, head) merges the splits by their
log-sum-exps and stores the output in the query's dtype.

vLLM's choices: stage 1 with BLOCK_KV 4, 1 warp, 1 stage; NUM_KV_SPLITS the attention
config's `tq_max_kv_splits_for_cuda_graph`, 32 by default (fixed for CUDA graphs); stage 2
with 4 warps, 2 stages.  Knobs: those six, None keeping vLLM's.  The rotated query (vLLM's
cuBLAS q @ PiT before the kernels), the fp32 split buffer, the output and the log-sum-exps
(the backend's workspace) are made in `prepare`.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import torch

from foreign import _common
from foreign.vllm_turboquant_decode.reference import NORM_CORRECTION, layout

LAST_INFO: dict[str, Any] = {}
VLLM_BLOCK_KV = 4
VLLM_WARPS = 1
VLLM_STAGES = 1
VLLM_SPLITS = 32  # tq_max_kv_splits_for_cuda_graph
VLLM_MERGE_WARPS = 4
VLLM_MERGE_STAGES = 2


@dataclass(frozen=True)
class TqDecodeConfig:
    block_kv: int | None = None  # None: vLLM's 4 tokens per loop step
    num_warps: int | None = None  # None: 1
    num_stages: int | None = None  # None: 1
    num_kv_splits: int | None = None  # None: 32
    merge_warps: int | None = None  # None: 4
    merge_stages: int | None = None  # None: 2


def prepare(
    cfg: TqDecodeConfig, query: torch.Tensor, kv_cache: torch.Tensor,
    block_table: torch.Tensor, seq_lens: torch.Tensor, pit: torch.Tensor,
    centroids: torch.Tensor, key_bits: int, value_bits: int,
) -> Callable[[], torch.Tensor]:  # fmt: skip
    stage1 = _common.load_source("vllm_turboquant_decode")
    stage2 = _common.load_source("vllm_decode_stage2")
    batch, heads, d = query.shape
    if kv_cache.dim() != 4 or kv_cache.dtype != torch.uint8:
        raise ValueError("kv_cache must be [pages, block_size, kv_heads, slot] uint8")
    _, block_size, kv_heads, _ = kv_cache.shape
    lay = layout(d, key_bits, value_bits)
    block_kv = cfg.block_kv or VLLM_BLOCK_KV
    warps = cfg.num_warps or VLLM_WARPS
    stages = cfg.num_stages or VLLM_STAGES
    splits = cfg.num_kv_splits or VLLM_SPLITS
    merge_warps = cfg.merge_warps or VLLM_MERGE_WARPS
    merge_stages = cfg.merge_stages or VLLM_MERGE_STAGES
    block_d = 1 << (d - 1).bit_length()
    dev = query.device
    q_rot = (query.float() @ pit).contiguous()  # vLLM's cuBLAS rotation, before the kernels
    mid_o = torch.empty(batch, heads, splits, d + 1, dtype=torch.float32, device=dev)
    out = torch.empty(batch, heads, d, dtype=query.dtype, device=dev)
    lse = torch.empty(batch, heads, dtype=torch.float32, device=dev)
    grid1 = (batch, heads, splits)
    grid2 = (batch, heads)
    scale = d**-0.5

    def launch() -> torch.Tensor:
        h1 = stage1._tq_decode_stage1[grid1](
            q_rot, kv_cache, block_table, seq_lens, centroids, mid_o,
            q_rot.stride(0), q_rot.stride(1), kv_cache.stride(0), kv_cache.stride(1),
            kv_cache.stride(2), block_table.stride(0), mid_o.stride(0), mid_o.stride(1),
            mid_o.stride(2),
            NUM_KV_HEADS=kv_heads, HEAD_DIM=d, BLOCK_SIZE=block_size, NUM_KV_SPLITS=splits,
            KV_GROUP_SIZE=heads // kv_heads, MSE_BITS=key_bits, MSE_BYTES=lay["mse"],
            KPS=lay["kps"], VQB=value_bits, VAL_DATA_BYTES=lay["vdata"], ATTN_SCALE=scale,
            BLOCK_D=block_d, BLOCK_KV=block_kv, KEY_FP8=0,
            NORM_CORRECTION=1 if NORM_CORRECTION else 0, FP8_E4B15=0,
            num_warps=warps, num_stages=stages,
        )  # fmt: skip
        stage2._fwd_kernel_stage2[grid2](
            mid_o, out, lse, seq_lens, mid_o.stride(0), mid_o.stride(1), mid_o.stride(2),
            out.stride(0), out.stride(1), lse.stride(0),
            NUM_KV_SPLITS=splits, BLOCK_DV=block_d, Lv=d,
            OUTPUT_FP16=1 if query.dtype == torch.float16 else 0,
            num_warps=merge_warps, num_stages=merge_stages,
        )  # fmt: skip
        _common.record(
            LAST_INFO, h1, kernels=2, kernel_names=["_tq_decode_stage1", "_fwd_kernel_stage2"],
            block_kv=block_kv, num_warps=warps, num_stages=stages, splits=splits,
            merge_warps=merge_warps, merge_stages=merge_stages,
            programs=grid1[0] * grid1[1] * grid1[2],
            metrics={"heads_per_program": 1, "num_splits": splits},
        )  # fmt: skip
        return out

    return launch
