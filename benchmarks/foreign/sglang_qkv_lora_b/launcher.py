"""SGLang's fused QKV LoRA B (python/sglang/srt/lora/triton_ops/qkv_lora_b.py, v0.5.9:
`_qkv_lora_b_kernel`), launched as SGLang's `qkv_lora_b_fwd` launches it so that its launch
choices are knobs.

The B half of a LoRA-wrapped fused QKV projection under SGLang's triton LoRA backend
(`--lora-backend triton`): the QKV shrink's [tokens, 3 x rank] output times each request's
adapter's B (rank -> q, k and v widths), scaled by the adapter's alpha / rank, rounded and
added in place to the base QKV output.  The batch is cut by request, not by adapter: each
request is one contiguous segment (seg_lens / seg_indptr, its adapter in weight_indices).
One program per (BLOCK_S rows x BLOCK_N columns of the widest slice, slice, request): the
grid's first axis is sized by the longest request and the q width (the k and v slices'
columns past their width and the shorter requests' rows past their length are masked: they
load and store nothing but still run), the rank walked in BLOCK_K-deep tl.dot steps against
the adapter's B^T tile, the rows read straight from x (no permutation gather).

SGLang's choices: BLOCK_S 16, BLOCK_N (its BLOCK_OUT) 64, BLOCK_K (its BLOCK_R) 16, and
Triton's default 4 warps and 3 stages (it passes none).  Knobs: those five, None keeping
SGLang's.  The segment offsets (built by SGLang per batch) are made in `prepare`.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import torch
import triton

from foreign import _common

LAST_INFO: dict[str, Any] = {}
SGLANG_BLOCK_S = 16
SGLANG_BLOCK_N = 64  # BLOCK_OUT
SGLANG_BLOCK_K = 16  # BLOCK_R
TRITON_DEFAULT_WARPS = 4
TRITON_DEFAULT_STAGES = 3


@dataclass(frozen=True)
class QkvLoraBConfig:
    block_s: int | None = None  # None: SGLang's 16
    block_n: int | None = None  # None: 64
    block_k: int | None = None  # None: 16
    num_warps: int | None = None  # None: Triton's default 4 (SGLang passes none)
    num_stages: int | None = None  # None: Triton's default 3


def prepare(
    cfg: QkvLoraBConfig, x: torch.Tensor, weights: torch.Tensor, base: torch.Tensor,
    seg_lens: torch.Tensor, weight_indices: torch.Tensor, lora_ranks: torch.Tensor,
    scalings: torch.Tensor, output_offset: torch.Tensor,
) -> Callable[[], torch.Tensor]:  # fmt: skip
    mod = _common.load_source("sglang_qkv_lora_b")
    if x.dim() != 2 or weights.dim() != 3:
        raise ValueError("x must be [tokens, 3 * rank], weights [loras, out, rank]")
    r = weights.shape[-1]
    out_dim = weights.shape[-2]
    if x.shape[1] != 3 * r or output_offset.numel() != 4 or base.shape != (x.shape[0], out_dim):
        raise ValueError("x must be [tokens, 3 * rank], base [tokens, out], 4 offsets")
    bs_ = cfg.block_s or SGLANG_BLOCK_S
    bn = cfg.block_n or SGLANG_BLOCK_N
    bk = cfg.block_k or SGLANG_BLOCK_K
    warps = cfg.num_warps or TRITON_DEFAULT_WARPS
    stages = cfg.num_stages or TRITON_DEFAULT_STAGES
    offs = output_offset.tolist()
    max_qkv_out_dim = max(offs[1] - offs[0], offs[2] - offs[1], offs[3] - offs[2])
    bs = seg_lens.numel()
    max_len = int(seg_lens.max())
    seg_indptr = torch.zeros(bs + 1, dtype=torch.int32, device=seg_lens.device)
    seg_indptr[1:] = torch.cumsum(seg_lens, 0)
    grid = (triton.cdiv(max_len, bs_) * triton.cdiv(max_qkv_out_dim, bn), 3, bs)

    def launch() -> torch.Tensor:
        handle = mod._qkv_lora_b_kernel[grid](
            x, weights, base, r, max_qkv_out_dim, x.stride(0), x.stride(1),
            weights.stride(0), weights.stride(1), weights.stride(2), base.stride(0),
            base.stride(1), seg_lens, seg_indptr, weight_indices, lora_ranks, output_offset,
            bs_, bn, bk, scalings, num_warps=warps, num_stages=stages,
        )  # fmt: skip
        _common.record(
            LAST_INFO, handle, kernels=1, kernel_names=["_qkv_lora_b_kernel"],
            block_s=bs_, block_n=bn, block_k=bk, num_warps=warps, num_stages=stages,
            programs=grid[0] * grid[1] * grid[2],
        )  # fmt: skip
        return base

    return launch
