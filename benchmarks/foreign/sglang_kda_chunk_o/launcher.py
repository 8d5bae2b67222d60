"""SGLang's Kimi Delta Attention chunk output (python/sglang/srt/layers/attention/fla/
kda.py, v0.5.9, adapted there from flash-linear-attention: `chunk_gla_fwd_kernel_o`),
launched by our copy of SGLang's `chunk_gla_fwd_o_gk` (varlen) so that its launch choices
are knobs.

The last kernel of Kimi Linear's chunked KDA prefill (`chunk_kda_fwd`): one program per
(BV output columns, 64-token chunk, head) accumulates the chunk's inter-chunk term, the
query rows scaled and gated channel by channel (q * scale * exp(g), cast back to q's dtype)
times the chunk's entering state h, in BK-deep tl.dot steps over the key dimension; then
adds the intra-chunk term, the lower triangle of Aqk (fp32, masked and cast to v's dtype)
times the chunk's corrected values, in one 64 x 64 x BV tl.dot; and stores BV columns of
the output.  Packed sequences reach it through (sequence, chunk) index pairs.

SGLang's launch: @triton.autotune over BK in (32, 64), BV in (64, 128), 2, 4 or 8 warps and
2, 3 or 4 stages, keyed on the chunk size; `triton_v1` takes the first configuration (BK
32, BV 64, 2 warps, 2 stages), the autotune decorator dropped at fetch.  Knobs: those
four, None keeping SGLang's first configuration.  SGLang builds the chunk index pairs once
per batch and writes the output over the original v's buffer; here the pairs and the
output buffer are made in `prepare`, outside the timed call.
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
SGLANG_BK = 32  # first of the autotune list's (32, 64)
SGLANG_BV = 64  # first of (64, 128)
SGLANG_WARPS = 2  # first of (2, 4, 8)
SGLANG_STAGES = 2  # first of (2, 3, 4)


@dataclass(frozen=True)
class KdaChunkOConfig:
    block_k: int | None = None  # None: 32
    block_v: int | None = None  # None: 64
    num_warps: int | None = None  # None: 2
    num_stages: int | None = None  # None: 2


def prepare(
    cfg: KdaChunkOConfig, q: torch.Tensor, v: torch.Tensor, g: torch.Tensor,
    aqk: torch.Tensor, h: torch.Tensor, cu_seqlens: torch.Tensor, chunk: int, scale: float,
) -> Callable[[], torch.Tensor]:  # fmt: skip
    mod = _common.load_source("sglang_kda_chunk_o")
    if q.dim() != 4 or q.shape[0] != 1 or not q.is_contiguous():
        raise ValueError("q must be a contiguous [1, tokens, heads, dk] tensor (packed)")
    _, tokens, heads, dk = q.shape
    dv = v.shape[-1]
    if g.shape != q.shape or v.shape[:3] != q.shape[:3] or aqk.shape != (1, tokens, heads, chunk):
        raise ValueError("g must be shaped like q, v [1, tokens, heads, dv], aqk [.., chunk]")
    indices = chunk_indices(cu_seqlens, chunk)
    nt = indices.shape[0]
    if h.shape != (nt, heads, dk, dv):
        raise ValueError(f"h must be [{nt} chunks, heads, dk, dv]")
    bk, bv = cfg.block_k or SGLANG_BK, cfg.block_v or SGLANG_BV
    warps, stages = cfg.num_warps or SGLANG_WARPS, cfg.num_stages or SGLANG_STAGES
    o = torch.empty_like(v)
    grid = (triton.cdiv(dv, bv), nt, heads)

    def launch() -> torch.Tensor:
        handle = mod.chunk_gla_fwd_kernel_o[grid](
            q=q, v=v, g=g, h=h, o=o, A=aqk, cu_seqlens=cu_seqlens, chunk_indices=indices,
            scale=scale, T=tokens, H=heads, K=dk, V=dv, BT=chunk, BK=bk, BV=bv,
            IS_VARLEN=True, num_warps=warps, num_stages=stages,
        )  # fmt: skip
        _common.record(
            LAST_INFO, handle, kernels=1, kernel_names=["chunk_gla_fwd_kernel_o"],
            block_k=bk, block_v=bv, num_warps=warps, num_stages=stages,
            programs=grid[0] * grid[1] * grid[2],
        )  # fmt: skip
        return o

    return launch
