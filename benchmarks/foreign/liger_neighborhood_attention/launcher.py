"""Liger-Kernel's fused neighborhood attention forward (liger_kernel.ops.
fused_neighborhood_attention, 0.8.5), launched by our copy of Liger's
`fused_neighborhood_attention_forward` so that its tile sizes are knobs.

Three launches per call.  (1) `_fused_neighborhood_attention_qk_kernel`, grid (b * h,
s / BLOCK_M, s / BLOCK_N): every tile of the dense [s, s] score matrix, q @ k^T by tl.dot
in BLOCK_K steps over the head, scaled, and set to -inf outside the neighborhood by
reading Liger's fp32 [s, s] neighborhood mask (once per head); written in the model dtype.
(2) Liger's own softmax (`_softmax_single_block_forward_kernel`, one program per score
row, the whole row in one block, warps from `calculate_settings`), writing the [s, s]
weights.  (3) `_fused_neighborhood_attention_av_kernel`, grid (b * h, s / BLOCK_M,
d / BLOCK_N): weights @ v by tl.dot over all s keys in BLOCK_K steps, although only
kernel_size of each row are non-zero.  Liger's choices: BLOCK_M = BLOCK_N = min(64,
next_pow2(s)), BLOCK_K = max(16, next_pow2(d)), the same three for both GEMM kernels (in
the AV kernel BLOCK_N spans the head and BLOCK_K the keys).  Liger also computes
num_warps and num_stages and passes them positionally, but both kernels declare
parameters of those names, so they bind there and the compiler gets Triton's defaults (4
warps, 3 stages): not knobs here.  Knobs: `block_m`, `block_n`, `block_k` (both GEMM
kernels) and `softmax_warps` (None: Liger's).

Liger builds the mask (a fourth kernel, on a zeroed [s, s] buffer) and allocates the
[b, h, s, s] scores, weights and the output on every call; the mask depends only on s,
the kernel size and the dilation, so here it is built in `prepare`, with the buffers.  The
timed call is the three launches; it returns the output (the weights stay in their
buffer, which Liger keeps for the backward pass).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import torch
import triton

from foreign import _common
from foreign.liger_neighborhood_attention.reference import DILATION, KERNEL_SIZE
from kbopt.bench.interpreter import fix_scalar_index_if_interpreting

LAST_INFO: dict[str, Any] = {}
KERNEL_NAMES = [
    "_fused_neighborhood_attention_qk_kernel",
    "_softmax_single_block_forward_kernel",
    "_fused_neighborhood_attention_av_kernel",
]


@dataclass(frozen=True)
class LigerNeighborhoodAttentionConfig:
    block_m: int | None = None  # None: liger's min(64, next_pow2(s))
    block_n: int | None = None  # None: liger's min(64, next_pow2(s))
    block_k: int | None = None  # None: liger's max(16, next_pow2(d))
    softmax_warps: int | None = None  # None: liger's calculate_settings(seq)


def prepare(
    cfg: LigerNeighborhoodAttentionConfig, q: torch.Tensor, k: torch.Tensor, v: torch.Tensor
) -> Callable[[], torch.Tensor]:
    fix_scalar_index_if_interpreting()
    from liger_kernel.ops import fused_neighborhood_attention as liger
    from liger_kernel.ops import softmax as liger_softmax
    from liger_kernel.ops.utils import calculate_settings

    if q.dim() != 4 or q.shape != k.shape or q.shape != v.shape:
        raise ValueError("q, k and v must all be [b, h, s, d]")
    for name, t in (("q", q), ("k", k), ("v", v)):
        if not t.is_contiguous():
            raise ValueError(f"{name} must be contiguous (liger makes it so per call)")
    b, h, seq, d = q.shape
    scale = 1.0 / math.sqrt(d)
    row_block, liger_row_warps = calculate_settings(seq)
    block_m = cfg.block_m or min(64, triton.next_power_of_2(seq))
    block_n = cfg.block_n or min(64, triton.next_power_of_2(seq))
    block_k = cfg.block_k or max(16, triton.next_power_of_2(d))
    softmax_warps = cfg.softmax_warps or liger_row_warps
    liger_stages = 4 if seq >= 512 else 2  # passed as liger does; binds to the kernel parameter

    out = torch.empty_like(q)
    scores = torch.empty(b, h, seq, seq, device=q.device, dtype=q.dtype)
    weights = torch.empty_like(scores)
    mask = torch.zeros(seq, seq, device=q.device, dtype=torch.float32)
    liger._neighborhood_mask_kernel[(seq,)](
        mask, seq, KERNEL_SIZE, DILATION, row_block, liger_stages, liger_row_warps
    )
    rows = scores.view(b * h * seq, seq)
    w_rows = weights.view(b * h * seq, seq)
    # The mask keeps kernel_size keys of each row's seq (the window is clamped at the edges,
    # never cut): what a kernel that visits only the window's tiles would compute.
    attended = min(KERNEL_SIZE, seq) / seq
    grid_qk = (b * h, triton.cdiv(seq, block_m), triton.cdiv(seq, block_n))
    grid_av = (b * h, triton.cdiv(seq, block_m), triton.cdiv(d, block_n))

    def launch() -> torch.Tensor:
        qk = liger._fused_neighborhood_attention_qk_kernel[grid_qk](
            q, k, scores, mask, *q.stride(), *k.stride(), *scores.stride(), b, h, seq, d, scale,
            KERNEL_SIZE, DILATION, block_m, block_n, block_k, liger_stages, liger_row_warps,
        )  # fmt: skip
        sm = liger_softmax._softmax_single_block_forward_kernel[(b * h * seq,)](
            w_rows, w_rows.stride(0), rows, rows.stride(0), seq, BLOCK_SIZE=row_block,
            num_warps=softmax_warps,
        )  # fmt: skip
        av = liger._fused_neighborhood_attention_av_kernel[grid_av](
            weights, v, out, *weights.stride(), *v.stride(), *out.stride(), b, h, seq, d,
            block_m, block_n, block_k, liger_stages, liger_row_warps,
        )  # fmt: skip
        _common.record(
            LAST_INFO, qk, kernels=3, kernel_names=KERNEL_NAMES, block_m=block_m,
            block_n=block_n, block_k=block_k, softmax_block=row_block,
            softmax_warps=softmax_warps, programs=grid_qk[0] * grid_qk[1] * grid_qk[2],
            metrics={"attended_fraction": attended},
        )  # fmt: skip
        for name, handle in (("softmax", sm), ("av", av)):
            for key in ("n_regs", "n_spills"):
                val = getattr(handle, key, None)
                if isinstance(val, int):
                    LAST_INFO[f"{name}_{key}"] = val
        return out

    return launch
