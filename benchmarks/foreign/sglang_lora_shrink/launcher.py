"""SGLang's chunked-SGMV LoRA shrink (python/sglang/srt/lora/triton_ops/
chunked_sgmv_shrink.py, v0.5.9: `_chunked_lora_shrink_kernel`), launched as SGLang's
`chunked_sgmv_lora_shrink_forward` launches it so that its launch choices are knobs.

The first half of every LoRA-wrapped linear layer under SGLang's default LoRA backend
(csgmv): the layer's input [tokens, hidden] times each token's adapter's stacked A
(hidden -> slices x rank), written to a narrow [tokens, slices x rank] buffer that the
expand then reads.  Once per batch (`ChunkedSgmvLoRABackend.prepare_lora_batch`) the tokens
are sorted by adapter (a stable argsort, the permutation) and each adapter's run cut into
segments of at most `chunk_size` tokens; one program per (BLOCK_N output columns, segment)
gathers its segment's rows of x through the permutation and walks the whole hidden size in
BLOCK_K-deep tl.dot steps against the adapter's A^T tile, then rounds and scatters its
rows.  No split-K: the reduction is serial in each program, and every column block of a
segment reads the segment's x rows again.  Columns past the adapter's rank x slices are
masked.

SGLang's choices: BLOCK_M = the chunk size (`batch_info.max_len`; 16 with the default
`--max-lora-chunk-size 16`), BLOCK_N 16, BLOCK_K 256 (a TODO to try split-K), Triton's
default 4 warps and 3 stages.  The grid's second axis is the number of segments, or the
batch size under a CUDA graph (a decode batch: the programs past the live segments return
at once).  Knobs: the chunk size (the segments and BLOCK_M together, as SGLang ties them),
BLOCK_N, BLOCK_K, `num_warps`, `num_stages`, None keeping SGLang's.  The permutation and
segments (built by SGLang on the host and copied per batch) and the output buffer are made
in `prepare`, outside the timed call.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import torch
import triton

from foreign import _common

# The segments, the chunk size and Triton's defaults are the same backend's as the expand's.
from foreign.sglang_lora_expand.launcher import (
    SGLANG_CHUNK,
    TRITON_DEFAULT_STAGES,
    TRITON_DEFAULT_WARPS,
    segments,
)

LAST_INFO: dict[str, Any] = {}
SGLANG_BLOCK_N = 16
SGLANG_BLOCK_K = 256


@dataclass(frozen=True)
class LoraShrinkConfig:
    chunk_size: int | None = None  # None: SGLang's 16 (also BLOCK_M)
    block_n: int | None = None  # None: 16
    block_k: int | None = None  # None: 256
    num_warps: int | None = None  # None: Triton's default 4 (SGLang passes none)
    num_stages: int | None = None  # None: Triton's default 3


def prepare(
    cfg: LoraShrinkConfig, x: torch.Tensor, weights: torch.Tensor, token_lora: torch.Tensor,
    lora_ranks: torch.Tensor, seqs: int, slices: int,
) -> Callable[[], torch.Tensor]:  # fmt: skip
    mod = _common.load_source("sglang_lora_shrink")
    if x.dim() != 2 or weights.dim() != 3 or not (x.is_contiguous() and weights.is_contiguous()):
        raise ValueError(
            "x must be contiguous [tokens, hidden], weights [loras, slices*rank, hidden]"
        )
    tokens, hidden = x.shape
    n = weights.shape[1]
    if weights.shape[2] != hidden or n % slices:
        raise ValueError("weights must be [loras, slices * rank, hidden]")
    chunk = cfg.chunk_size or SGLANG_CHUNK
    bn = cfg.block_n or SGLANG_BLOCK_N
    bk = cfg.block_k or SGLANG_BLOCK_K
    warps = cfg.num_warps or TRITON_DEFAULT_WARPS
    stages = cfg.num_stages or TRITON_DEFAULT_STAGES
    perm, seg_w, seg_indptr = segments(token_lora, chunk)
    num_segs = seg_w.numel()
    cuda_graph = tokens == seqs  # a decode batch, replayed in SGLang's CUDA graph
    grid = (triton.cdiv(n, bn), seqs if cuda_graph else num_segs)
    out = torch.empty(tokens, n, device=x.device, dtype=x.dtype)

    def launch() -> torch.Tensor:
        handle = mod._chunked_lora_shrink_kernel[grid](
            x=x, weights=weights, output=out, seg_indptr=seg_indptr, weight_indices=seg_w,
            lora_ranks=lora_ranks, permutation=perm, num_segs=num_segs, N=n, K=hidden,
            NUM_SLICES=slices, BLOCK_M=chunk, BLOCK_N=bn, BLOCK_K=bk, num_warps=warps,
            num_stages=stages,
        )  # fmt: skip
        _common.record(
            LAST_INFO, handle, kernels=1, kernel_names=["_chunked_lora_shrink_kernel"],
            chunk_size=chunk, block_m=chunk, block_n=bn, block_k=bk, num_warps=warps,
            num_stages=stages, segments=num_segs, cuda_graph_grid=cuda_graph,
            programs=grid[0] * grid[1],
        )  # fmt: skip
        return out

    return launch
