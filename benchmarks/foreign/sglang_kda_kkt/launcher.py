"""SGLang's Kimi Delta Attention intra-chunk matrices (python/sglang/srt/layers/attention/
fla/kda.py, v0.5.9, adapted there from flash-linear-attention:
`chunk_kda_scaled_dot_kkt_fwd_kernel_intra_sub_inter` and
`chunk_kda_scaled_dot_kkt_fwd_kernel_intra_sub_intra`), launched by our copy of SGLang's
`chunk_kda_scaled_dot_kkt_fwd` (varlen, fp32 out) so that its launch choices are knobs.

The first tl.dot step of Kimi Linear's chunked KDA prefill (`chunk_kda_fwd`, right after the
gate cumsum): for every 64-token chunk and head, the beta-scaled K K^T (A, for solve_tril)
and the scaled Q K^T (Aqk, for the output), each pair of tokens decayed channel by channel
by exp(g_i - g_j).  A per-channel decay does not factor out of the product, so the chunk is
cut into BC-token sub-chunks: the first launch, one program per (chunk, sub-chunk pair,
head), does the blocks below the diagonal as BC x BC tl.dots over BK-deep key slices, both
operands rescaled around the row block's first gate (exp(g - g_n) and exp(g_n - g)); the
second, one program per (chunk, sub-chunk, head), does the diagonal blocks without tensor
cores, one column token at a time (a [BC, dk] multiply, exp and row sum per column).

SGLang's launch: BC = min(16, chunk); the first kernel autotuned over BK in (32, 64), 1, 2,
4 or 8 warps and 2, 3 or 4 stages, the second over 1, 2, 4 or 8 warps (whole key head, BK =
next power of two of dk): `triton_v1` takes the first configuration of each list (BK 32,
1 warp, 2 stages; 1 warp and Triton's default 3 stages), the autotune decorators dropped.
Knobs: `sub_chunk` (BC, for both launches), the first launch's `inter_block_k`,
`inter_warps`, `inter_stages`, the second's `intra_warps`, `intra_stages`; None keeps
SGLang's.

SGLang builds the (sequence, chunk) index pairs from cu_seqlens once per batch and zero-fills
A and Aqk per call (the upper blocks are never written); here both are made in `prepare`,
outside the timed call.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import torch
import triton

from foreign import _common
from foreign.sglang_gdn_cumsum.launcher import chunk_indices

LAST_INFO: dict[str, Any] = {}
SGLANG_SUB_CHUNK = 16  # min(16, BT)
SGLANG_INTER_BK = 32  # first of the autotune list's (32, 64)
SGLANG_INTER_WARPS = 1
SGLANG_INTER_STAGES = 2
SGLANG_INTRA_WARPS = 1
TRITON_DEFAULT_STAGES = 3  # the second kernel's autotune sets no stages


@dataclass(frozen=True)
class KdaKktConfig:
    sub_chunk: int | None = None  # None: SGLang's min(16, chunk)
    inter_block_k: int | None = None  # None: 32
    inter_warps: int | None = None  # None: 1
    inter_stages: int | None = None  # None: 2
    intra_warps: int | None = None  # None: 1
    intra_stages: int | None = None  # None: Triton's default 3


def prepare(
    cfg: KdaKktConfig, q: torch.Tensor, k: torch.Tensor, g: torch.Tensor, beta: torch.Tensor,
    cu_seqlens: torch.Tensor, chunk: int, scale: float,
) -> Callable[[], tuple[torch.Tensor, torch.Tensor]]:  # fmt: skip
    mod = _common.load_source("sglang_kda_kkt")
    if k.dim() != 4 or k.shape[0] != 1 or not k.is_contiguous():
        raise ValueError("k must be a contiguous [1, tokens, heads, dk] tensor (packed)")
    _, tokens, heads, dk = k.shape
    if q.shape != k.shape or g.shape != k.shape or beta.shape != (1, tokens, heads):
        raise ValueError("q and g must be shaped like k, beta [1, tokens, heads]")
    bc = cfg.sub_chunk or min(SGLANG_SUB_CHUNK, chunk)
    if bc > chunk or chunk % bc:
        raise ValueError(f"sub_chunk {bc} must divide the {chunk}-token chunk")
    nc = chunk // bc
    indices = chunk_indices(cu_seqlens, chunk)
    a = torch.zeros(1, tokens, heads, chunk, device=k.device, dtype=torch.float32)
    aqk = torch.zeros_like(a)
    bk = cfg.inter_block_k or SGLANG_INTER_BK
    bk_intra = max(triton.next_power_of_2(dk), 16)
    w1, s1 = cfg.inter_warps or SGLANG_INTER_WARPS, cfg.inter_stages or SGLANG_INTER_STAGES
    w2, s2 = cfg.intra_warps or SGLANG_INTRA_WARPS, cfg.intra_stages or TRITON_DEFAULT_STAGES
    nt = indices.shape[0]
    grid_inter, grid_intra = (nt, nc * nc, heads), (nt, nc, heads)
    common = dict(
        q=q, k=k, g=g, beta=beta, A=a, Aqk=aqk, scale=scale, cu_seqlens=cu_seqlens,
        chunk_indices=indices, T=tokens, H=heads, K=dk, BT=chunk, BC=bc, IS_VARLEN=True,
    )  # fmt: skip

    def launch() -> tuple[torch.Tensor, torch.Tensor]:
        mod.chunk_kda_scaled_dot_kkt_fwd_kernel_intra_sub_inter[grid_inter](
            **common, BK=bk, NC=nc, num_warps=w1, num_stages=s1
        )
        handle = mod.chunk_kda_scaled_dot_kkt_fwd_kernel_intra_sub_intra[grid_intra](
            **common, BK=bk_intra, num_warps=w2, num_stages=s2
        )
        _common.record(
            LAST_INFO, handle, kernels=2,
            kernel_names=[
                "chunk_kda_scaled_dot_kkt_fwd_kernel_intra_sub_inter",
                "chunk_kda_scaled_dot_kkt_fwd_kernel_intra_sub_intra",
            ],
            sub_chunk=bc, inter_block_k=bk, inter_warps=w1, inter_stages=s1,
            intra_warps=w2, intra_stages=s2,
            programs=nt * nc * nc * heads + nt * nc * heads,
        )  # fmt: skip
        return a, aqk

    return launch
