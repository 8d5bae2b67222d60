"""SGLang's per-channel chunk-local cumulative sum (python/sglang/srt/layers/attention/fla/
cumsum.py, v0.5.9, adapted there from flash-linear-attention:
`chunk_local_cumsum_vector_kernel`), launched by our copy of SGLang's
`chunk_local_cumsum_vector` (varlen, not head-first, not reversed, no scale, fp32 out) so
that its launch choices are knobs.

Kimi Linear's chunked KDA prefill (`chunk_kda_fwd`) first turns the per-token, per-head,
per-channel log decays g [1, tokens, heads, head_dim] (the KDA gate's fp32 output) into
their running sums within each 64-token chunk of each packed sequence.  One program per
(BS-wide slice of the channels, chunk, head) loads the chunk's [64, BS] tile of its head
(rows a [heads, head_dim] stride apart) in fp32 and multiplies the 64 x 64 lower-triangular
ones mask by it with one tl.dot (allow_tf32=False), then stores the [64, BS] sums; the last
chunk of a sequence is cut by a boundary check.  SGLang's launch: @triton.autotune over
BS in (32, 64) (on a device with the shared memory for it, (16, 32) otherwise) and 2, 4 or
8 warps, keyed on the shape; `triton_v1` takes the first configuration (BS 32, 2 warps),
the autotune decorator dropped at fetch.  Knobs: `block_s`, `num_warps`, None keeping
SGLang's first configuration.  The kernel has no loop, so the stages change nothing and
are no knob (Triton's default).  The chunk (64) is the algorithm's, not a tile.

SGLang builds the (sequence, chunk) index pairs from cu_seqlens once per batch and
allocates the output per call; here both are made in `prepare`, outside the timed call.
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
SGLANG_BS = 32  # first of the autotune list's (32, 64)
SGLANG_WARPS = 2  # first of (2, 4, 8)


@dataclass(frozen=True)
class KdaCumsumConfig:
    block_s: int | None = None  # None: SGLang's 32
    num_warps: int | None = None  # None: SGLang's 2


def prepare(
    cfg: KdaCumsumConfig, g: torch.Tensor, cu_seqlens: torch.Tensor, chunk: int
) -> Callable[[], torch.Tensor]:
    mod = _common.load_source("sglang_kda_cumsum")
    if g.dim() != 4 or g.shape[0] != 1 or not g.is_contiguous():
        raise ValueError("g must be a contiguous [1, tokens, heads, head_dim] tensor (packed)")
    _, tokens, heads, dim = g.shape
    indices = chunk_indices(cu_seqlens, chunk)
    out = torch.empty_like(g, dtype=torch.float32)
    bs = cfg.block_s or SGLANG_BS
    warps = cfg.num_warps or SGLANG_WARPS
    grid = (triton.cdiv(dim, bs), indices.shape[0], heads)

    def launch() -> torch.Tensor:
        handle = mod.chunk_local_cumsum_vector_kernel[grid](
            s=g, o=out, scale=None, cu_seqlens=cu_seqlens, chunk_indices=indices, T=tokens,
            B=1, H=heads, S=dim, BT=chunk, BS=bs, REVERSE=False, HAS_SCALE=False,
            IS_VARLEN=True, HEAD_FIRST=False, num_warps=warps,
        )  # fmt: skip
        _common.record(
            LAST_INFO, handle, kernels=1, kernel_names=["chunk_local_cumsum_vector_kernel"],
            chunk=chunk, block_s=bs, num_warps=warps, programs=grid[0] * grid[1] * grid[2],
        )  # fmt: skip
        return out

    return launch
