"""SGLang's chunked-SGMV LoRA expand (python/sglang/srt/lora/triton_ops/
chunked_sgmv_expand.py, v0.5.9: `_chunked_lora_expand_kernel`), launched as SGLang's
`chunked_sgmv_lora_expand_forward` launches it so that its launch choices are knobs.

The second half of every LoRA-wrapped linear layer under SGLang's default LoRA backend
(csgmv): the shrink's [tokens, slices x rank] output times each token's adapter's B
(rank -> the slice's output width), scaled by the adapter's alpha / rank, added in place to
the base layer's output.  Once per batch (`ChunkedSgmvLoRABackend.prepare_lora_batch`) the
tokens are sorted by adapter (a stable argsort, the permutation) and each adapter's run cut
into segments of at most `chunk_size` tokens; one program per (BLOCK_N output columns of a
slice, slice, segment) gathers its segment's rows of x through the permutation, walks the
rank in BLOCK_K-deep tl.dot steps against the adapter's B^T tile, scales, rounds to the
dtype, adds the base rows it gathers and scatters them back.  Columns past a slice's width
(the k and v slices of a fused QKV are narrower than q: the grid is sized by the widest)
are masked (they load and store nothing but still run).

SGLang's choices: BLOCK_M = the chunk size (`batch_info.max_len`; with the default
`--max-lora-chunk-size 16`, 16 whatever the batch), BLOCK_N 64, BLOCK_K 16 (a TODO to tune
them per operation), Triton's default 4 warps and 3 stages.  Knobs: the chunk size (the
segments and BLOCK_M together, as SGLang ties them), BLOCK_N, BLOCK_K, `num_warps`,
`num_stages`, None keeping SGLang's.  The permutation and segments (built by SGLang on the
host and copied per batch) are made in `prepare`, outside the timed call.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import torch
import triton

from foreign import _common

LAST_INFO: dict[str, Any] = {}
SGLANG_CHUNK = 16  # --max-lora-chunk-size's default (and MIN_CHUNK_SIZE)
SGLANG_BLOCK_N = 64
SGLANG_BLOCK_K = 16
TRITON_DEFAULT_WARPS = 4
TRITON_DEFAULT_STAGES = 3


@dataclass(frozen=True)
class LoraExpandConfig:
    chunk_size: int | None = None  # None: SGLang's 16 (also BLOCK_M)
    block_n: int | None = None  # None: 64
    block_k: int | None = None  # None: 16
    num_warps: int | None = None  # None: Triton's default 4 (SGLang passes none)
    num_stages: int | None = None  # None: Triton's default 3


def segments(
    token_lora: torch.Tensor, chunk: int
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """What `prepare_lora_batch` builds: the permutation grouping tokens by adapter (stable),
    each segment's adapter and the segments' CSR boundaries (each adapter's run cut into
    `chunk`-token pieces, the last shorter), all int32."""
    device = token_lora.device
    perm = torch.argsort(token_lora, stable=True)
    ids, counts = torch.unique_consecutive(token_lora[perm], return_counts=True)
    seg_w: list[int] = []
    seg_lens: list[int] = []
    for a, n in zip(ids.tolist(), counts.tolist(), strict=True):
        pieces = -(-n // chunk)
        seg_w += [a] * pieces
        seg_lens += [chunk] * (pieces - 1) + [n - (pieces - 1) * chunk]
    indptr = torch.zeros(len(seg_lens) + 1, dtype=torch.int32)
    indptr[1:] = torch.tensor(seg_lens).cumsum(0)
    return (
        perm.to(torch.int32),
        torch.tensor(seg_w, dtype=torch.int32, device=device),
        indptr.to(device),
    )


def prepare(
    cfg: LoraExpandConfig, x: torch.Tensor, weights: torch.Tensor, base: torch.Tensor,
    token_lora: torch.Tensor, lora_ranks: torch.Tensor, scalings: torch.Tensor,
    slice_offsets: torch.Tensor,
) -> Callable[[], torch.Tensor]:  # fmt: skip
    mod = _common.load_source("sglang_lora_expand")
    if x.dim() != 2 or weights.dim() != 3 or not (x.is_contiguous() and weights.is_contiguous()):
        raise ValueError("x must be contiguous [tokens, slices * rank], weights [loras, out, rank]")
    num_slices = slice_offsets.numel() - 1
    out_dim, max_rank = weights.shape[1], weights.shape[2]
    if x.shape[1] != num_slices * max_rank or base.shape != (x.shape[0], out_dim):
        raise ValueError("x must be [tokens, slices * rank] and base [tokens, out]")
    chunk = cfg.chunk_size or SGLANG_CHUNK
    bn = cfg.block_n or SGLANG_BLOCK_N
    bk = cfg.block_k or SGLANG_BLOCK_K
    warps = cfg.num_warps or TRITON_DEFAULT_WARPS
    stages = cfg.num_stages or TRITON_DEFAULT_STAGES
    perm, seg_w, seg_indptr = segments(token_lora, chunk)
    num_segs = seg_w.numel()
    max_slice = int((slice_offsets[1:] - slice_offsets[:-1]).max())
    grid = (triton.cdiv(max_slice, bn), num_slices, num_segs)

    def launch() -> torch.Tensor:
        handle = mod._chunked_lora_expand_kernel[grid](
            x=x, weights=weights, output=base, seg_indptr=seg_indptr, weight_indices=seg_w,
            lora_ranks=lora_ranks, permutation=perm, num_segs=num_segs, scalings=scalings,
            slice_offsets=slice_offsets, NUM_SLICES=num_slices, OUTPUT_DIM=out_dim,
            MAX_RANK=max_rank, BLOCK_M=chunk, BLOCK_N=bn, BLOCK_K=bk, num_warps=warps,
            num_stages=stages,
        )  # fmt: skip
        _common.record(
            LAST_INFO, handle, kernels=1, kernel_names=["_chunked_lora_expand_kernel"],
            chunk_size=chunk, block_m=chunk, block_n=bn, block_k=bk, num_warps=warps,
            num_stages=stages, segments=num_segs, programs=grid[0] * grid[1] * grid[2],
        )  # fmt: skip
        return base

    return launch
