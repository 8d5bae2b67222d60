"""SGLang's WY recompute of the gated delta rule (python/sglang/srt/layers/attention/fla/
wy_fast.py, v0.5.9, adapted there from flash-linear-attention: `recompute_w_u_fwd_kernel`),
launched by our copy of SGLang's `recompute_w_u_fwd` (varlen) so that its launch choices
are knobs.

The fourth step of Qwen3-Next's chunked gated-delta-rule prefill (`chunk_gated_delta_rule_
fwd`, after the gate cumsum, the scaled K K^T and its triangular inverse A): for every
64-token chunk of every packed sequence and every value head, u = A (v * beta) and
w = A (k * beta * exp(g)), the WY form the chunked state recurrence consumes next.  One
program per (chunk, value head) loads A's 64 x 64 block once and multiplies it by the
beta-scaled values in BV-wide tl.dot tiles, then by the beta- and decay-scaled keys in
BK-wide tiles (the key head is shared by heads // kheads value heads, each reading it
again).  SGLang's choices: BK = BV = 64, num_warps = 4, num_stages = 3 (the autotune
decorator over 2/4/8 warps and 2/3/4 stages is commented out upstream).  Knobs:
`block_k`, `block_v`, `num_warps`, `num_stages`, None keeping SGLang's.  The 64-token chunk
(BT) is the algorithm's, not a tile.

SGLang builds the (sequence, chunk) index pairs from cu_seqlens once per batch (fla.index's
`prepare_chunk_indices`) and allocates w and u per call; here both are made in `prepare`,
outside the timed call.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import torch

from foreign import _common
from foreign.sglang_gdn_cumsum.launcher import chunk_indices

LAST_INFO: dict[str, Any] = {}
SGLANG_BK = 64
SGLANG_BV = 64
SGLANG_WARPS = 4
SGLANG_STAGES = 3


@dataclass(frozen=True)
class GdnWyConfig:
    block_k: int | None = None  # None: SGLang's 64
    block_v: int | None = None  # None: SGLang's 64
    num_warps: int | None = None  # None: SGLang's 4
    num_stages: int | None = None  # None: SGLang's 3


def prepare(
    cfg: GdnWyConfig, k: torch.Tensor, v: torch.Tensor, beta: torch.Tensor, g: torch.Tensor,
    A: torch.Tensor, cu_seqlens: torch.Tensor, chunk: int,
) -> Callable[[], tuple[torch.Tensor, torch.Tensor]]:  # fmt: skip
    mod = _common.load_source("sglang_gdn_wy")
    if k.dim() != 4 or k.shape[0] != 1 or not k.is_contiguous():
        raise ValueError("k must be a contiguous [1, tokens, kheads, dk] tensor (packed)")
    _, tokens, kheads, dk = k.shape
    if v.dim() != 4 or v.shape[:2] != (1, tokens) or not v.is_contiguous():
        raise ValueError("v must be a contiguous [1, tokens, heads, dv] tensor")
    heads, dv = v.shape[2], v.shape[3]
    if beta.shape != (1, tokens, heads) or g.shape != beta.shape or heads % kheads:
        raise ValueError("beta and g must be [1, tokens, heads], heads a multiple of kheads")
    if A.shape != (1, tokens, heads, chunk) or not A.is_contiguous():
        raise ValueError("A must be a contiguous [1, tokens, heads, chunk] tensor")
    indices = chunk_indices(cu_seqlens, chunk)
    w = k.new_empty(1, tokens, heads, dk)
    u = torch.empty_like(v)
    bk = cfg.block_k or SGLANG_BK
    bv = cfg.block_v or SGLANG_BV
    warps = cfg.num_warps or SGLANG_WARPS
    stages = cfg.num_stages or SGLANG_STAGES
    grid = (indices.shape[0], heads)

    def launch() -> tuple[torch.Tensor, torch.Tensor]:
        handle = mod.recompute_w_u_fwd_kernel[grid](
            k=k, v=v, beta=beta, w=w, u=u, A=A, g=g, cu_seqlens=cu_seqlens,
            chunk_indices=indices, T=tokens, H=heads, Hg=kheads, K=dk, V=dv, BT=chunk,
            BK=bk, BV=bv, IS_VARLEN=True, num_warps=warps, num_stages=stages,
        )  # fmt: skip
        _common.record(
            LAST_INFO, handle, kernels=1, kernel_names=["recompute_w_u_fwd_kernel"],
            chunk=chunk, block_k=bk, block_v=bv, num_warps=warps, num_stages=stages,
            programs=grid[0] * grid[1],
        )  # fmt: skip
        return w, u

    return launch
