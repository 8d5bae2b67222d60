"""SGLang's chunk-local cumulative sum of the gated delta rule's gates (python/sglang/srt/
layers/attention/fla/cumsum.py, v0.5.9, adapted there from flash-linear-attention:
`chunk_local_cumsum_scalar_kernel`), launched by our copy of SGLang's
`chunk_local_cumsum_scalar` (varlen, not head-first, not reversed, no scale, fp32 out) so
that its launch choice is a knob.

Qwen3-Next's chunked gated-delta-rule prefill (`chunk_gated_delta_rule_fwd`) first turns the
per-token, per-head log decays g [1, tokens, heads] into their running sums within each
64-token chunk of each packed sequence.  One program per (chunk, head) loads the chunk's 64
gates of its head (a block pointer with stride `heads`: one fp32 per 128-byte row of the
[tokens, heads] matrix), scans them with tl.cumsum in fp32 and stores them the same way;
the last chunk of a sequence is cut by a boundary check.  SGLang's choices: num_warps = 8,
num_stages = 3 (given explicitly; the kernel has no loop, so the stages change nothing and
are no knob).  Knob: `num_warps`, None keeping SGLang's.  The chunk (64) is the algorithm's,
not a tile.

SGLang builds the (sequence, chunk) index pairs from cu_seqlens once per batch (fla.index's
`prepare_chunk_indices`, shimmed out of the fetched file); here they and the output are made
in `prepare`, outside the timed call.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import torch

from foreign import _common

LAST_INFO: dict[str, Any] = {}
SGLANG_WARPS = 8
SGLANG_STAGES = 3


@dataclass(frozen=True)
class GdnCumsumConfig:
    num_warps: int | None = None  # None: SGLang's 8


def chunk_indices(cu_seqlens: torch.Tensor, chunk: int) -> torch.Tensor:
    """fla.index's `prepare_chunk_indices`: one (sequence, chunk of it) int32 pair per chunk."""
    lens = (cu_seqlens[1:] - cu_seqlens[:-1]).long()
    chunks = (lens + chunk - 1) // chunk
    seq = torch.repeat_interleave(torch.arange(len(lens), device=cu_seqlens.device), chunks)
    first = torch.cumsum(chunks, 0) - chunks
    local = torch.arange(int(chunks.sum()), device=cu_seqlens.device) - first[seq]
    return torch.stack([seq, local], dim=1).to(cu_seqlens)


def prepare(
    cfg: GdnCumsumConfig, g: torch.Tensor, cu_seqlens: torch.Tensor, chunk: int
) -> Callable[[], torch.Tensor]:
    mod = _common.load_source("sglang_gdn_cumsum")
    if g.dim() != 3 or g.shape[0] != 1 or not g.is_contiguous():
        raise ValueError("g must be a contiguous [1, tokens, heads] tensor (packed sequences)")
    _, tokens, heads = g.shape
    indices = chunk_indices(cu_seqlens, chunk)
    out = torch.empty_like(g, dtype=torch.float32)
    warps = cfg.num_warps or SGLANG_WARPS
    grid = (indices.shape[0], heads)

    def launch() -> torch.Tensor:
        handle = mod.chunk_local_cumsum_scalar_kernel[grid](
            s=g, o=out, scale=None, cu_seqlens=cu_seqlens, chunk_indices=indices, T=tokens,
            B=1, H=heads, BT=chunk, HEAD_FIRST=False, REVERSE=False, HAS_SCALE=False,
            IS_VARLEN=True, num_warps=warps, num_stages=SGLANG_STAGES,
        )  # fmt: skip
        _common.record(
            LAST_INFO, handle, kernels=1, kernel_names=["chunk_local_cumsum_scalar_kernel"],
            chunk=chunk, num_warps=warps, num_stages=SGLANG_STAGES,
            programs=grid[0] * grid[1],
        )  # fmt: skip
        return out

    return launch
