"""SGLang's Triton MHA decode (python/sglang/srt/layers/attention/triton_ops/
decode_attention.py, v0.5.9: `_fwd_kernel_stage1` and `_fwd_kernel_stage2`), launched as
SGLang's `decode_attention_fwd_normal` launches them (`_decode_att_m_fwd`, then
`_decode_softmax_reducev_fwd`) so that their launch choices are knobs.

SGLang's Triton attention backend takes this path when kv_group_num is 1 (as many KV heads
as query heads: Llama-2, Phi-3, Qwen1.5 and other MHA models).  Stage 1: one program per
(request, query head, KV split) walks its split of the request's slots BLOCK_N at a time:
loads the slots from kv_indices, gathers BLOCK_N K rows of its head, scores them by an
element-wise product with the query row and a row sum (one query row: no tensor cores),
keeps an online softmax and accumulates the gathered V rows; it stores its normalised
partial output and log-sum-exp in fp32.  Split lengths are the request's length over its
split count rounded up to 32 (_MIN_BLOCK_KV).  Stage 2: one program per (request, head)
merges the splits by their log-sum-exps and stores the output in q's dtype.

SGLang's choices: stage 1 with BLOCK_N 64, 4 warps (kv_group_num 1; 2 otherwise), 2
stages; stage 2 with 4 warps, 2 stages; `max_kv_splits` from the server's
`--triton-attention-num-kv-splits`, 8 by default.  SGLang lowers a request's split count
below the maximum for short requests or large batches (`get_num_kv_splits`); here every
request gets `num_kv_splits`, as in `sglang_mla_decode`.  Knobs: those six, None keeping
SGLang's.  The fp32 split buffers and the per-request split counts, made by the backend
once per batch, are made in `prepare`.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import torch
import triton

from foreign import _common

LAST_INFO: dict[str, Any] = {}
MIN_BLOCK_KV = 32  # SGLang's _MIN_BLOCK_KV: split lengths are rounded up to this
SGLANG_BLOCK_N = 64
SGLANG_WARPS = 4  # kv_group_num == 1
SGLANG_STAGES = 2
SGLANG_SPLITS = 8  # --triton-attention-num-kv-splits
SGLANG_MERGE_WARPS = 4
SGLANG_MERGE_STAGES = 2


@dataclass(frozen=True)
class MhaDecodeConfig:
    block_n: int | None = None  # None: SGLang's 64 KV rows per loop step
    num_warps: int | None = None  # None: 4
    num_stages: int | None = None  # None: 2
    num_kv_splits: int | None = None  # None: 8
    merge_warps: int | None = None  # None: 4
    merge_stages: int | None = None  # None: 2


def prepare(
    cfg: MhaDecodeConfig, q: torch.Tensor, k: torch.Tensor, v: torch.Tensor,
    kv_indptr: torch.Tensor, kv_indices: torch.Tensor, sm_scale: float,
) -> Callable[[], torch.Tensor]:  # fmt: skip
    mod = _common.load_source("sglang")
    batch, heads, head_dim = q.shape
    if k.dim() != 3 or k.shape[1:] != (heads, head_dim) or v.shape != k.shape:
        raise ValueError("k and v must be [slots, heads, head_dim] (one KV head per query head)")
    block_n = cfg.block_n or SGLANG_BLOCK_N
    warps = cfg.num_warps or SGLANG_WARPS
    stages = cfg.num_stages or SGLANG_STAGES
    splits = cfg.num_kv_splits or SGLANG_SPLITS
    merge_warps = cfg.merge_warps or SGLANG_MERGE_WARPS
    merge_stages = cfg.merge_stages or SGLANG_MERGE_STAGES
    lk = lv = head_dim
    block_d = triton.next_power_of_2(lk)
    dev = q.device
    logits = torch.empty(batch, heads, splits, lv, dtype=torch.float32, device=dev)
    lse = torch.empty(batch, heads, splits, dtype=torch.float32, device=dev)
    num_splits = torch.full((batch,), splits, dtype=torch.int32, device=dev)
    o = torch.empty_like(q)
    grid1 = (batch, heads, splits)
    grid2 = (batch, heads)
    scale = float(sm_scale)

    def launch() -> torch.Tensor:
        h1 = mod._fwd_kernel_stage1[grid1](
            q, k, v, scale, kv_indptr, kv_indices, logits, lse, num_splits,
            q.stride(0), q.stride(1), k.stride(0), k.stride(1), v.stride(0), v.stride(1),
            logits.stride(0), logits.stride(1), logits.stride(2),
            kv_group_num=1, BLOCK_DMODEL=block_d, BLOCK_DV=block_d, BLOCK_N=block_n,
            MIN_BLOCK_KV=MIN_BLOCK_KV, logit_cap=0.0, xai_temperature_len=-1,
            num_warps=warps, num_stages=stages, Lk=lk, Lv=lv,
        )  # fmt: skip
        mod._fwd_kernel_stage2[grid2](
            logits, lse, o, kv_indptr, num_splits, None,
            logits.stride(0), logits.stride(1), logits.stride(2), o.stride(0), o.stride(1),
            MAX_KV_SPLITS=splits, MIN_BLOCK_KV=MIN_BLOCK_KV, BLOCK_DV=block_d, Lv=lv,
            HAS_SINK=False, num_warps=merge_warps, num_stages=merge_stages,
        )  # fmt: skip
        _common.record(
            LAST_INFO, h1, kernels=2,
            kernel_names=["_fwd_kernel_stage1", "_fwd_kernel_stage2"],
            block_n=block_n, num_warps=warps, num_stages=stages, splits=splits,
            merge_warps=merge_warps, merge_stages=merge_stages,
            programs=grid1[0] * grid1[1] * grid1[2],
        )  # fmt: skip
        return o

    return launch
