"""SGLang's Double Sparsity sparse decode (python/sglang/srt/layers/attention/triton_ops/
double_sparsity_attention.py, v0.5.9: `_sparse_fwd_kernel_flash_decode_stage2` and
`_sparse_fwd_kernel_flash_decode_stage3`), launched as SGLang's `sparse_flash_decode_stage2`
and `_stage3` launch them so that their launch choices are knobs.

With `--enable-double-sparsity`, a decode step past `ds_sparse_decode_threshold` scores every
context token from a few heavy channels (`sglang_ds_label_scores`), keeps each query head's
`ds_heavy_token_num` best positions with torch.topk, and attends to those alone.  Stage 2:
one program per (request, query head, BLOCK_SEQ of the head's heavy positions) walks them
BLOCK_N at a time: loads the positions, maps them to KV slots through the request's
req_to_token row, gathers the BLOCK_N x head_dim K rows of the head's KV head, forms the
scores by an element-wise product and a row sum (no tensor cores: one query row), keeps an
online softmax and accumulates the gathered V rows; it stores its normalised partial output
and log-sum-exp in fp32.  Every query head gathers its own positions, so the rows of a KV
head are not shared across its query heads.  Stage 3: one program per (request, query head)
merges the splits' partial outputs by their log-sum-exps and stores the output in q's dtype.

SGLang's choices (`DoubleSparseAttnBackend`: BLOCK_SEQ 128; the stage wrappers): stage 2 with
BLOCK_N 16, 1 warp, 2 stages; stage 3 with 4 warps, 2 stages.  Knobs: those six, None keeping
SGLang's (BLOCK_SEQ must be a multiple of BLOCK_N, as SGLang asserts).  The fp32 split
buffers, allocated by the backend once per batch, are made in `prepare`.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import torch
import triton

from foreign import _common

LAST_INFO: dict[str, Any] = {}
SGLANG_BLOCK_SEQ = 128  # DoubleSparseAttnBackend.BLOCK_SEQ
SGLANG_BLOCK_N = 16
SGLANG_WARPS = 1
SGLANG_STAGES = 2
SGLANG_MERGE_WARPS = 4
SGLANG_MERGE_STAGES = 2


@dataclass(frozen=True)
class DsSparseDecodeConfig:
    block_seq: int | None = None  # None: SGLang's 128 heavy positions per split
    block_n: int | None = None  # None: 16
    num_warps: int | None = None  # None: 1
    num_stages: int | None = None  # None: 2
    merge_warps: int | None = None  # None: 4
    merge_stages: int | None = None  # None: 2


def prepare(
    cfg: DsSparseDecodeConfig, q: torch.Tensor, k: torch.Tensor, v: torch.Tensor,
    req_to_token: torch.Tensor, topk: torch.Tensor, sm_scale: float,
) -> Callable[[], torch.Tensor]:  # fmt: skip
    mod = _common.load_source("sglang_ds_sparse_decode")
    batch, heads, head_dim = q.shape
    if k.dim() != 3 or k.shape[2] != head_dim or v.shape != k.shape or heads % k.shape[1]:
        raise ValueError("k and v must be [slots, kv_heads, head_dim], heads a multiple")
    if topk.dim() != 3 or topk.shape[:2] != (heads, batch):
        raise ValueError("topk must be [heads, batch, heavy]")
    heavy = topk.shape[2]
    block_seq = cfg.block_seq or SGLANG_BLOCK_SEQ
    block_n = cfg.block_n or SGLANG_BLOCK_N
    if block_seq % block_n:
        raise ValueError(f"block_seq {block_seq} must be a multiple of block_n {block_n}")
    warps = cfg.num_warps or SGLANG_WARPS
    stages = cfg.num_stages or SGLANG_STAGES
    merge_warps = cfg.merge_warps or SGLANG_MERGE_WARPS
    merge_stages = cfg.merge_stages or SGLANG_MERGE_STAGES
    splits = triton.cdiv(heavy, block_seq)
    mid_o = torch.empty((batch, heads, splits, head_dim), dtype=torch.float32, device=q.device)
    mid_lse = torch.empty((batch, heads, splits), dtype=torch.float32, device=q.device)
    o = torch.empty_like(q)
    grid2 = (batch, heads, splits)
    grid3 = (batch, heads)
    args2 = (
        q, k, v, sm_scale, req_to_token, topk, mid_o, mid_lse, heavy,
        req_to_token.stride(0), topk.stride(0), topk.stride(1), q.stride(0), q.stride(1),
        k.stride(0), k.stride(1), v.stride(0), v.stride(1), mid_o.stride(0), mid_o.stride(1),
        mid_o.stride(2), mid_lse.stride(0), mid_lse.stride(1), heads // k.shape[1],
    )  # fmt: skip
    args3 = (
        mid_o, mid_lse, o, heavy, mid_o.stride(0), mid_o.stride(1), mid_o.stride(2),
        mid_lse.stride(0), mid_lse.stride(1), o.stride(0), o.stride(1),
    )  # fmt: skip

    def launch() -> torch.Tensor:
        h2 = mod._sparse_fwd_kernel_flash_decode_stage2[grid2](
            *args2, BLOCK_SEQ=block_seq, BLOCK_DMODEL=head_dim, BLOCK_N=block_n,
            num_warps=warps, num_stages=stages,
        )  # fmt: skip
        mod._sparse_fwd_kernel_flash_decode_stage3[grid3](
            *args3, BLOCK_SEQ=block_seq, BLOCK_DMODEL=head_dim, num_warps=merge_warps,
            num_stages=merge_stages,
        )  # fmt: skip
        _common.record(
            LAST_INFO, h2, kernels=2,
            kernel_names=["_sparse_fwd_kernel_flash_decode_stage2",
                          "_sparse_fwd_kernel_flash_decode_stage3"],
            block_seq=block_seq, block_n=block_n, num_warps=warps, num_stages=stages,
            merge_warps=merge_warps, merge_stages=merge_stages, splits=splits,
            programs=grid2[0] * grid2[1] * grid2[2],
        )  # fmt: skip
        return o

    return launch
