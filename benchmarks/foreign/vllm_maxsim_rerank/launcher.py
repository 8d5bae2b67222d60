"""vLLM's flash-MaxSim rerank (vllm/v1/pool/flash_maxsim/flash_maxsim_rerank.py, v0.34.0:
`_maxsim_rerank_kernel`), launched as vLLM's `_run_rerank_kernel` launches it, so that its
launch choices are knobs.

One program per document.  For each BLOCK_Q-query tile (unrolled over the query's
power-of-two bucket) it loads the query tile in fp16, then walks the document bucket in
BLOCK_D-token steps (every program walks the batch's longest bucket, masking past its own
length): a [BLOCK_Q, d_pad] x [d_pad, BLOCK_D] fp16 tl.dot into fp32, the document's padded
tokens at -inf, a running row maximum; the tile's maxima are summed into the score, stored
as fp32.

vLLM's launch: `@triton.autotune` over ten (BLOCK_Q, BLOCK_D, warps, stages)
configurations keyed on the query and document buckets and d_pad, pruned by vLLM's shared
memory estimate and by BLOCK_Q <= 2 x the query length.  Knobs: the query tile, the
document tile, the warps and the stages, None keeping the first surviving configuration
(16, 16, 2 warps, 2 stages).  The query and document buckets are the next of 32, 64, ...,
4096 (`_round_to_bucket`) and d_pad the next power of two, as vLLM computes them; vLLM's
per-call scores tensor is made in `prepare` (its fp16 casts are no-ops on fp16 inputs and
the query needs no padding at a power-of-two dim).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import torch

from foreign import _common

LAST_INFO: dict[str, Any] = {}
# the first entry of vLLM's _get_configs() that survives _prune_configs at these shapes
FIRST_CONFIG = {"block_q": 16, "block_d": 16, "num_warps": 2, "num_stages": 2}


def _next_pow2(x: int) -> int:
    return 1 << (x - 1).bit_length()


def _round_to_bucket(x: int) -> int:
    for b in (32, 64, 128, 256, 512, 1024, 2048, 4096):
        if x <= b:
            return b
    return _next_pow2(x)


@dataclass(frozen=True)
class MaxSimConfig:
    block_q: int | None = None  # None: 16 query tokens per tile
    block_d: int | None = None  # None: 16 document tokens per step
    num_warps: int | None = None  # None: 2
    num_stages: int | None = None  # None: 2


def prepare(
    cfg: MaxSimConfig, query: torch.Tensor, docs: torch.Tensor, doc_offsets: torch.Tensor,
    doc_lengths: torch.Tensor, max_len: int,
) -> Callable[[], torch.Tensor]:  # fmt: skip
    mod = _common.load_source("vllm_maxsim_rerank")
    lq, d = query.shape
    if docs.shape[1] != d or query.dtype != torch.float16 or docs.dtype != torch.float16:
        raise ValueError("query [query_len, dim] and docs [tokens, dim], both fp16")
    d_pad = _next_pow2(max(d, 16))
    if d_pad != d:
        # vLLM's zero-padded copy of the query (small), made once here
        padded = torch.zeros(lq, d_pad, dtype=query.dtype, device=query.device)
        padded[:, :d] = query
        query = padded
    block_q = cfg.block_q or FIRST_CONFIG["block_q"]
    block_d = cfg.block_d or FIRST_CONFIG["block_d"]
    warps = cfg.num_warps or FIRST_CONFIG["num_warps"]
    stages = cfg.num_stages or FIRST_CONFIG["num_stages"]
    lq_bucket = _round_to_bucket(lq)
    ld_bucket = _round_to_bucket(max_len)
    n = doc_offsets.shape[0]
    scores = torch.empty(n, dtype=torch.float32, device=query.device)
    grid = (n,)

    def launch() -> torch.Tensor:
        handle = mod._maxsim_rerank_kernel[grid](
            query, docs, doc_offsets, doc_lengths, scores, n, lq, lq_bucket, ld_bucket,
            d, d_pad, query.stride(0), query.stride(1), docs.stride(0), docs.stride(1),
            BLOCK_Q=block_q, BLOCK_D=block_d, num_warps=warps, num_stages=stages,
        )  # fmt: skip
        _common.record(
            LAST_INFO, handle, kernels=1, kernel_names=["_maxsim_rerank_kernel"],
            block_q=block_q, block_d=block_d, num_warps=warps, num_stages=stages,
            programs=n, query_bucket=lq_bucket, doc_bucket=ld_bucket,
        )  # fmt: skip
        return scores

    return launch
