"""SGLang's LoRA embedding A lookup (python/sglang/srt/lora/triton_ops/embedding_lora_a.py,
v0.5.9: `_embedding_lora_a_kernel`), launched as SGLang's `embedding_lora_a_fwd` launches it,
so that its launch choices are knobs.

A 2-D grid: one program per token position of the longest segment and per request (the
positions past a request's segment return at once, as do requests whose adapter has rank
0).  A program loads its token's id, then walks its adapter's rank in BLOCK_RANK steps,
each step gathering A[slot, r, id] for BLOCK_RANK ranks r (elements a whole vocabulary
apart: one element per memory sector) and storing them into the token's output row.

SGLang's launch: BLOCK_RANK 128 whatever the rank, with Triton's default 4 warps and 3
stages (it passes none; no autotune, heuristic or tuned table).  Knobs: the rank step, the
warps and the stages of the rank loop, None keeping SGLang's.  SGLang zero-fills its output
per call (the ranks below the pool's maximum are never written); here it is zero-filled once
in `prepare`, which the kernel leaves zero past every rank, and the extra-embeddings
placeholder is made there too.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import torch

from foreign import _common

LAST_INFO: dict[str, Any] = {}
SGLANG_BLOCK_RANK = 128
TRITON_DEFAULT_WARPS = 4
TRITON_DEFAULT_STAGES = 3


@dataclass(frozen=True)
class EmbeddingLoraAConfig:
    block_rank: int | None = None  # None: SGLang's 128
    num_warps: int | None = None  # None: Triton's default 4 (SGLang passes none)
    num_stages: int | None = None  # None: Triton's default 3 (SGLang passes none)


def prepare(
    cfg: EmbeddingLoraAConfig, input_ids: torch.Tensor, weights: torch.Tensor,
    seg_lens: torch.Tensor, seg_indptr: torch.Tensor, weight_indices: torch.Tensor,
    lora_ranks: torch.Tensor, max_len: int,
) -> Callable[[], torch.Tensor]:  # fmt: skip
    mod = _common.load_source("sglang_embedding_lora_a")
    if not (input_ids.is_contiguous() and weights.is_contiguous()) or weights.dim() != 3:
        raise ValueError("contiguous ids and a [slots, rank, vocab] weight are required")
    tokens = input_ids.shape[0]
    num_loras, rank, vocab = weights.shape
    bs = seg_lens.shape[0]
    block = cfg.block_rank or SGLANG_BLOCK_RANK
    warps = cfg.num_warps or TRITON_DEFAULT_WARPS
    stages = cfg.num_stages or TRITON_DEFAULT_STAGES
    out = torch.zeros(tokens, rank, dtype=weights.dtype, device=weights.device)
    extra = torch.empty(1, 1, 1, dtype=weights.dtype, device=weights.device)
    grid = (max_len, bs)

    def launch() -> torch.Tensor:
        handle = mod._embedding_lora_a_kernel[grid](
            input_ids, weights, out, extra, vocab, rank, num_loras, weights.stride(0),
            weights.stride(1), weights.stride(2), out.stride(0), out.stride(1), 1, 1, 1,
            seg_lens, seg_indptr, weight_indices, lora_ranks, block, False,
            num_warps=warps, num_stages=stages,
        )  # fmt: skip
        _common.record(
            LAST_INFO, handle, kernels=1, kernel_names=["_embedding_lora_a_kernel"],
            block_rank=block, num_warps=warps, num_stages=stages, programs=grid[0] * grid[1],
        )  # fmt: skip
        return out

    return launch
