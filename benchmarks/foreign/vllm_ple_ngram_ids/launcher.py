"""Qwen4Exp's per-layer-embedding n-gram hash ids (vllm/models/qwen4_exp/common/ops/ple.py,
v0.34.0: `_ple_ngram_ids_kernel`), launched as vLLM's `_ple_ngram_ids` launches it, so
that its launch choices are knobs.

The grid is one program per BLOCK_T tokens.  Each program binary-searches query_start_loc
for its tokens' requests (num_reqs.bit_length() halvings, vectorized over the tile), starts
every head's hash at token x multiplier[0], then walks back ngram - 1 predecessors (from the
step's tokens, or at a request's start from its lookback row), XORs each into the heads
whose n-gram reaches it, and finally takes each int64 hash modulo its head's prime and adds
the head's offset: a [BLOCK_T, heads padded to a power of two] int64 tile stored.

vLLM's launch: 8 tokens per program and 4 warps, `launch_pdl` set where the GPU supports
programmatic dependent launch (compute capability 9 and above: the kernel waits on the
grid before it and releases the next).  Knobs: the token tile and the warps, None keeping
vLLM's.  The output, vLLM's torch.empty when the caller passes none, is made in `prepare`.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import torch
import triton

from foreign import _common

LAST_INFO: dict[str, Any] = {}
VLLM_BLOCK_T = 8
VLLM_WARPS = 4


@dataclass(frozen=True)
class NgramIdsConfig:
    block_t: int | None = None  # None: vLLM's 8 tokens per program
    num_warps: int | None = None  # None: vLLM's 4


def launch_pdl(x: torch.Tensor) -> bool:
    """vLLM's `current_platform.is_arch_support_pdl()`: compute capability 9 and above."""
    return x.is_cuda and torch.cuda.get_device_capability(x.device)[0] >= 9


def prepare(
    cfg: NgramIdsConfig, input_ids: torch.Tensor, query_start_loc: torch.Tensor,
    ngram_context: torch.Tensor, multipliers: torch.Tensor, sizes: torch.Tensor,
    offsets: torch.Tensor, eos: int, heads: int,
) -> Callable[[], torch.Tensor]:  # fmt: skip
    mod = _common.load_source("vllm_ple_ngram_ids")
    block_t = cfg.block_t or VLLM_BLOCK_T
    if block_t & (block_t - 1):
        raise ValueError(f"block_t {block_t} must be a power of two")
    warps = cfg.num_warps or VLLM_WARPS
    ids = input_ids.reshape(-1)
    tokens = ids.shape[0]
    reqs = query_start_loc.numel() - 1
    ctx_len = ngram_context.shape[1]
    out = torch.empty((tokens, ctx_len * heads), dtype=torch.int64, device=ids.device)
    grid = (triton.cdiv(tokens, block_t),)
    pdl = launch_pdl(ids)

    def launch() -> torch.Tensor:
        handle = mod._ple_ngram_ids_kernel[grid](
            ids, query_start_loc, ngram_context, multipliers, sizes, offsets, out,
            tokens, reqs, eos, binary_search_iters=reqs.bit_length(),
            NGRAM_CONTEXT_LEN=ctx_len, HEADS_PER_NGRAM=heads, BLOCK_T=block_t,
            launch_pdl=pdl, num_warps=warps,
        )  # fmt: skip
        _common.record(
            LAST_INFO, handle, kernels=1, kernel_names=["_ple_ngram_ids_kernel"],
            block_t=block_t, num_warps=warps, programs=grid[0], launch_pdl=pdl,
        )  # fmt: skip
        return out

    return launch
