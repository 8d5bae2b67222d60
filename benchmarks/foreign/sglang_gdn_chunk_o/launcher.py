"""SGLang's chunked output of the gated delta rule (python/sglang/srt/layers/attention/fla/
chunk_o.py, v0.5.9, adapted there from FLA: `chunk_fwd_kernel_o`), launched by our copy of
SGLang's `chunk_fwd_o` so that its launch choices are knobs.

The last kernel of Qwen3-Next's chunked linear-attention prefill
(`chunk_gated_delta_rule_fwd`): per chunk of BT tokens and value head, one program per BV
output columns walks the key dimension in BK slices, accumulating q h (the state the chunk
starts from) and q k^T in two fp32 tl.dots of the same loop, then scales them by the decays
(exp(g) per row; exp(g_i - g_j) on the causal part), masks the upper triangle and adds
tl.dot(A, v) in v's dtype.  SGLang's launch: BT = min(64, max(16, next_power_of_2(T))),
BK 128, BV 64, 4 warps, 2 stages (the module's autotune list is commented out upstream), with
varlen chunk indices (fla.index's `prepare_chunk_indices`), built here in `prepare` as SGLang
builds them once per batch.  Knobs: BK, BV, `num_warps`, `num_stages`, None keeping
SGLang's.  SGLang zero-fills o per call (torch.zeros_like); the kernel writes every element,
so here o is allocated in `prepare`, outside the timed call.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import torch
import triton

from foreign import _common
from foreign.sglang_gdn_chunk_o.reference import block_t
from foreign.sglang_gdn_cumsum.launcher import chunk_indices

LAST_INFO: dict[str, Any] = {}
SGLANG_BK = 128
SGLANG_BV = 64
SGLANG_WARPS = 4
SGLANG_STAGES = 2


@dataclass(frozen=True)
class GdnChunkOConfig:
    block_k: int | None = None  # None: SGLang's 128
    block_v: int | None = None  # None: SGLang's 64
    num_warps: int | None = None  # None: SGLang's 4
    num_stages: int | None = None  # None: SGLang's 2


def prepare(
    cfg: GdnChunkOConfig, q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, h: torch.Tensor,
    g: torch.Tensor, cu_seqlens: torch.Tensor, chunk: int,
) -> Callable[[], torch.Tensor]:  # fmt: skip
    mod = _common.load_source("sglang_gdn_chunk_o")
    if q.dim() != 4 or k.shape != q.shape or v.dim() != 4 or q.shape[1] != v.shape[1]:
        raise ValueError("q and k must be [1, tokens, kheads, dk], v [1, tokens, heads, dv]")
    b, tokens, kheads, dk = q.shape
    heads, dv = v.shape[2], v.shape[3]
    if b != 1 or heads % kheads or g.shape != (1, tokens, heads):
        raise ValueError("one packed batch row; heads a multiple of kheads; g [1, tokens, heads]")
    bt = block_t(tokens, chunk)
    indices = chunk_indices(cu_seqlens, bt)
    nt = indices.shape[0]
    if h.shape != (nt, heads, dk, dv):
        raise ValueError(f"h must be [{nt}, {heads}, {dk}, {dv}]")
    bk = cfg.block_k or SGLANG_BK
    bv = cfg.block_v or SGLANG_BV
    warps = cfg.num_warps or SGLANG_WARPS
    stages = cfg.num_stages or SGLANG_STAGES
    o = torch.empty_like(v)
    scale = dk**-0.5
    grid = (triton.cdiv(dv, bv), nt, heads)

    def launch() -> torch.Tensor:
        handle = mod.chunk_fwd_kernel_o[grid](
            q, k, v, h, g, o, cu_seqlens, indices, scale, T=tokens, H=heads, Hg=kheads, K=dk,
            V=dv, BT=bt, BK=bk, BV=bv, USE_G=True, IS_VARLEN=True, num_warps=warps,
            num_stages=stages,
        )  # fmt: skip
        _common.record(
            LAST_INFO, handle, kernels=1, kernel_names=["chunk_fwd_kernel_o"], block_t=bt,
            block_k=bk, block_v=bv, num_warps=warps, num_stages=stages,
            programs=grid[0] * grid[1] * grid[2],
        )  # fmt: skip
        return o

    return launch
