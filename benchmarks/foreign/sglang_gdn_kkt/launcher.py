"""SGLang's per-chunk scaled K K^T of the gated delta rule (python/sglang/srt/layers/
attention/fla/chunk_scaled_dot_kkt.py, v0.5.9, adapted there from flash-linear-attention:
`chunk_scaled_dot_kkt_fwd_kernel`), launched by our copy of SGLang's
`chunk_scaled_dot_kkt_fwd` (varlen, with the gate cumsum, fp32 out) so that its launch
choices are knobs.

The second step of Qwen3-Next's chunked gated-delta-rule prefill (`chunk_gated_delta_rule_
fwd`, right after the gate cumsum): for every 64-token chunk of every packed sequence and
every value head, the chunk's keys times their own transpose, scaled by beta per row and by
the decay exp(g_i - g_j) between the two tokens, strictly lower triangle kept, written as a
[tokens, heads, 64] fp32 matrix that `solve_tril` inverts next.  One program per (chunk,
value head) accumulates the 64 x 64 product over the key dimension in BK-deep tl.dot steps
(the key head is shared by heads // kheads value heads, each reading it again), then applies
the gate, beta and the mask.  SGLang's choices: BK = 64, num_warps = 8, num_stages = 3.
Knobs: `block_k`, `num_warps`, `num_stages`, None keeping SGLang's.  The 64-token chunk (BT)
is the algorithm's, not a tile.

SGLang builds the (sequence, chunk) index pairs from cu_seqlens once per batch (fla.index's
`prepare_chunk_indices`, shimmed out of the fetched file) and allocates A per call; here both
are made in `prepare`, outside the timed call.
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
SGLANG_WARPS = 8
SGLANG_STAGES = 3


@dataclass(frozen=True)
class GdnKktConfig:
    block_k: int | None = None  # None: SGLang's 64
    num_warps: int | None = None  # None: SGLang's 8
    num_stages: int | None = None  # None: SGLang's 3


def prepare(
    cfg: GdnKktConfig, k: torch.Tensor, beta: torch.Tensor, g: torch.Tensor,
    cu_seqlens: torch.Tensor, chunk: int,
) -> Callable[[], torch.Tensor]:  # fmt: skip
    mod = _common.load_source("sglang_gdn_kkt")
    if k.dim() != 4 or k.shape[0] != 1 or not k.is_contiguous():
        raise ValueError("k must be a contiguous [1, tokens, kheads, dk] tensor (packed)")
    _, tokens, kheads, dk = k.shape
    heads = beta.shape[-1]
    if beta.shape != (1, tokens, heads) or g.shape != beta.shape or heads % kheads:
        raise ValueError("beta and g must be [1, tokens, heads], heads a multiple of kheads")
    indices = chunk_indices(cu_seqlens, chunk)
    out = torch.empty(1, tokens, heads, chunk, device=k.device, dtype=torch.float32)
    bk = cfg.block_k or SGLANG_BK
    warps = cfg.num_warps or SGLANG_WARPS
    stages = cfg.num_stages or SGLANG_STAGES
    grid = (indices.shape[0], heads)

    def launch() -> torch.Tensor:
        handle = mod.chunk_scaled_dot_kkt_fwd_kernel[grid](
            k=k, beta=beta, g_cumsum=g, A=out, cu_seqlens=cu_seqlens, chunk_indices=indices,
            T=tokens, H=heads, Hg=kheads, K=dk, BT=chunk, BK=bk, IS_VARLEN=True, USE_G=True,
            num_warps=warps, num_stages=stages,
        )  # fmt: skip
        _common.record(
            LAST_INFO, handle, kernels=1, kernel_names=["chunk_scaled_dot_kkt_fwd_kernel"],
            chunk=chunk, block_k=bk, num_warps=warps, num_stages=stages,
            programs=grid[0] * grid[1],
        )  # fmt: skip
        return out

    return launch
