"""SGLang's Double Sparsity dense decode (python/sglang/srt/layers/attention/triton_ops/
double_sparsity_attention.py, v0.5.9: `_fwd_kernel_flash_decode_stage1` and
`_fwd_kernel_flash_decode_stage2`), launched as SGLang's `flash_decode_stage1` and
`flash_decode_stage2` launch them so that their launch choices are knobs.

`DoubleSparseAttnBackend.forward_decode` calls `flash_decode_attention_fwd` (this pair)
whenever the batch's longest request is below `ds_sparse_decode_threshold` (4096 by default)
or its shortest below the heavy-token count: the whole context, not the heavy tokens.
Stage 1: one program per (request, query head, BLOCK_SEQ of the request's positions) walks
them BLOCK_N at a time: loads the slots from the request's req_to_token row (through
b_req_idx), gathers the BLOCK_N x head_dim K rows of the head's KV head, forms the scores by
an element-wise product and a row sum (no tensor cores: one query row, one query head per
program, so a KV head's rows are read by each of its query heads), keeps an online softmax
and accumulates the V rows; a program whose split starts past its request's length stores
nothing.  It stores its normalised partial output and log-sum-exp in fp32.  Stage 2: one
program per (request, query head) merges the request's cdiv(seq_len, BLOCK_SEQ) splits by
their log-sum-exps and stores the output in q's dtype.

SGLang's choices (`flash_decode_attention_fwd`: BLOCK_SEQ 256; `flash_decode_stage1`:
BLOCK_N 16, 1 warp, 2 stages; `flash_decode_stage2`: 4 warps, 2 stages).  Knobs: those six,
None keeping SGLang's (BLOCK_SEQ must be a multiple of BLOCK_N, as SGLang asserts).  The
fp32 split buffers, which `flash_decode_attention_fwd` allocates on every call, are made in
`prepare`; the grid's split axis is cdiv(max_len_in_batch, BLOCK_SEQ), SGLang's
max_seq_len from the batch metadata, read here once in `prepare`.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import torch
import triton

from foreign import _common

LAST_INFO: dict[str, Any] = {}
SGLANG_BLOCK_SEQ = 256  # flash_decode_attention_fwd's BLOCK_SEQ
SGLANG_BLOCK_N = 16
SGLANG_WARPS = 1
SGLANG_STAGES = 2
SGLANG_MERGE_WARPS = 4
SGLANG_MERGE_STAGES = 2


@dataclass(frozen=True)
class DsDenseDecodeConfig:
    block_seq: int | None = None  # None: SGLang's 256 positions per split
    block_n: int | None = None  # None: 16
    num_warps: int | None = None  # None: 1
    num_stages: int | None = None  # None: 2
    merge_warps: int | None = None  # None: 4
    merge_stages: int | None = None  # None: 2


def prepare(
    cfg: DsDenseDecodeConfig, q: torch.Tensor, k: torch.Tensor, v: torch.Tensor,
    req_to_token: torch.Tensor, b_req_idx: torch.Tensor, seq_lens: torch.Tensor,
) -> Callable[[], torch.Tensor]:  # fmt: skip
    mod = _common.load_source("sglang_ds_dense_decode")
    batch, heads, head_dim = q.shape
    if k.dim() != 3 or k.shape[2] != head_dim or v.shape != k.shape or heads % k.shape[1]:
        raise ValueError("k and v must be [slots, kv_heads, head_dim], heads a multiple")
    if head_dim not in (16, 32, 64, 128):
        raise ValueError(f"head_dim {head_dim} not in SGLang's {{16, 32, 64, 128}}")
    if b_req_idx.shape != (batch,) or seq_lens.shape != (batch,):
        raise ValueError("b_req_idx and seq_lens must be [batch]")
    block_seq = cfg.block_seq or SGLANG_BLOCK_SEQ
    block_n = cfg.block_n or SGLANG_BLOCK_N
    if block_seq % block_n:
        raise ValueError(f"block_seq {block_seq} must be a multiple of block_n {block_n}")
    warps = cfg.num_warps or SGLANG_WARPS
    stages = cfg.num_stages or SGLANG_STAGES
    merge_warps = cfg.merge_warps or SGLANG_MERGE_WARPS
    merge_stages = cfg.merge_stages or SGLANG_MERGE_STAGES
    max_len = int(seq_lens.max())
    splits = triton.cdiv(max_len, block_seq)
    mid_o = torch.empty((batch, heads, splits, head_dim), dtype=torch.float32, device=q.device)
    mid_lse = torch.empty((batch, heads, splits), dtype=torch.float32, device=q.device)
    o = torch.empty_like(q)
    grid1 = (batch, heads, splits)
    grid2 = (batch, heads)
    args1 = (
        q, k, v, 1.0 / (head_dim**0.5), req_to_token, b_req_idx, seq_lens, mid_o, mid_lse,
        req_to_token.stride(0), req_to_token.stride(1), q.stride(0), q.stride(1), q.stride(2),
        k.stride(0), k.stride(1), k.stride(2), v.stride(0), v.stride(1), v.stride(2),
        mid_o.stride(0), mid_o.stride(1), mid_o.stride(2), mid_o.stride(3),
        mid_lse.stride(0), mid_lse.stride(1), mid_lse.stride(2), heads // k.shape[1],
    )  # fmt: skip
    args2 = (
        seq_lens, mid_o, mid_lse, o, mid_o.stride(0), mid_o.stride(1), mid_o.stride(2),
        mid_o.stride(3), mid_lse.stride(0), mid_lse.stride(1), mid_lse.stride(2),
        o.stride(0), o.stride(1), o.stride(2),
    )  # fmt: skip

    def launch() -> torch.Tensor:
        h1 = mod._fwd_kernel_flash_decode_stage1[grid1](
            *args1, BLOCK_SEQ=block_seq, BLOCK_DMODEL=head_dim, BLOCK_N=block_n,
            num_warps=warps, num_stages=stages,
        )  # fmt: skip
        mod._fwd_kernel_flash_decode_stage2[grid2](
            *args2, BLOCK_SEQ=block_seq, BLOCK_DMODEL=head_dim, num_warps=merge_warps,
            num_stages=merge_stages,
        )  # fmt: skip
        _common.record(
            LAST_INFO, h1, kernels=2,
            kernel_names=["_fwd_kernel_flash_decode_stage1", "_fwd_kernel_flash_decode_stage2"],
            block_seq=block_seq, block_n=block_n, num_warps=warps, num_stages=stages,
            merge_warps=merge_warps, merge_stages=merge_stages, splits=splits,
            programs=grid1[0] * grid1[1] * grid1[2],
        )  # fmt: skip
        return o

    return launch
