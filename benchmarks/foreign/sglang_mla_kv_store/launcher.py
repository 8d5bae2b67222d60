"""SGLang's MLA latent-cache store (python/sglang/srt/mem_cache/utils.py, v0.5.9:
`set_mla_kv_buffer_kernel`), launched as SGLang's `set_mla_kv_buffer_triton` launches it,
so that its launch choices are knobs.

The grid is (tokens, ceil((nope + rope) / BLOCK)).  Each program loads its token's slot in
the pool (int64) and stores BLOCK values of the slot's [nope | rope] row: a block wholly in
the latent part is loaded from k_nope, one wholly past it from k_rope, and a block that
straddles the boundary loads both under complementary masks and selects per element.
Which branch a program takes is decided by BLOCK: SGLang's 128 splits DeepSeek's 512 + 64
row into four latent blocks and one masked rope block.

SGLang's launch: BLOCK = 128 (fixed in set_mla_kv_buffer_triton), Triton's default 4 warps
(it passes none; there is no loop, so the stages play no part).  Knobs: the block and the
warps, None keeping SGLang's.  The pool is written in place and returned; the store is
idempotent, so repeated launches leave the same pool.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import torch
import triton

from foreign import _common

LAST_INFO: dict[str, Any] = {}
SGLANG_BLOCK = 128
TRITON_DEFAULT_WARPS = 4


@dataclass(frozen=True)
class MlaKvStoreConfig:
    block: int | None = None  # None: SGLang's 128 values per program
    num_warps: int | None = None  # None: Triton's default 4 (SGLang passes none)


def prepare(
    cfg: MlaKvStoreConfig, kv_buffer: torch.Tensor, loc: torch.Tensor,
    k_nope: torch.Tensor, k_rope: torch.Tensor,
) -> Callable[[], torch.Tensor]:  # fmt: skip
    mod = _common.load_source("sglang_mla_kv_store")
    nope_dim = k_nope.shape[-1]
    rope_dim = k_rope.shape[-1]
    total = nope_dim + rope_dim
    if kv_buffer.shape[-1] != total or k_nope.shape[0] != loc.numel():
        raise ValueError("kv_buffer rows must be nope + rope wide, one loc per token")
    block = cfg.block or SGLANG_BLOCK
    warps = cfg.num_warps or TRITON_DEFAULT_WARPS
    grid = (loc.numel(), triton.cdiv(total, block))

    def launch() -> torch.Tensor:
        handle = mod.set_mla_kv_buffer_kernel[grid](
            kv_buffer, k_nope, k_rope, loc, kv_buffer.stride(0), k_nope.stride(0),
            k_rope.stride(0), nope_dim, rope_dim, BLOCK=block, num_warps=warps,
        )  # fmt: skip
        _common.record(
            LAST_INFO, handle, kernels=1, kernel_names=["set_mla_kv_buffer_kernel"],
            block=block, num_warps=warps, programs=grid[0] * grid[1],
        )  # fmt: skip
        return kv_buffer

    return launch
