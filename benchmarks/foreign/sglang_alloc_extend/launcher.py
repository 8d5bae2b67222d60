"""SGLang's paged KV allocation for an extend batch (python/sglang/srt/mem_cache/allocator.py,
v0.5.9: `alloc_extend_kernel`), launched as SGLang's `PagedTokenToKVPoolAllocator.alloc_extend`
launches it, so that its launch choices are knobs.

One program per request.  It loads every earlier request's prefix and sequence length (a
bs_upper-wide masked load, bs_upper the batch's next power of two) and sums them with
tl.sum into its output offset and its first free page, then writes its slots in three
masked stores: the rest of the prefix's partly filled page (one page-wide tile), its whole
new pages (a tile as wide as the extend tile, each slot's page gathered from the free list)
and a last partial page.  Every program spans the whole extend tile, however few tokens it
has: the work grows with requests x tile.

SGLang's launch: the extend tile is `seen_max_num_extend_tokens_next_power_of_2`, the next
power of two of the largest extend batch the allocator has seen (a fresh allocator's first
batch: of this one), with Triton's default 4 warps; bs_upper and the page size are fixed by
the batch and the server.  Knobs: the extend tile (at least the batch's tokens) and the
warps, None keeping SGLang's.  SGLang's per-call output is made in `prepare`; the free list's
advance and the host-side page count after the kernel are not timed.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import torch

from foreign import _common

LAST_INFO: dict[str, Any] = {}
TRITON_DEFAULT_WARPS = 4


def _next_pow2(x: int) -> int:
    return 1 << max(0, x - 1).bit_length()


@dataclass(frozen=True)
class AllocExtendConfig:
    extend_tile: int | None = None  # None: the next power of two of the batch's new tokens
    num_warps: int | None = None  # None: Triton's default 4 (SGLang passes none)


def prepare(
    cfg: AllocExtendConfig, pre_lens: torch.Tensor, seq_lens: torch.Tensor,
    last_loc: torch.Tensor, free_pages: torch.Tensor, page_size: int,
) -> Callable[[], torch.Tensor]:  # fmt: skip
    mod = _common.load_source("sglang_alloc_extend")
    bs = pre_lens.shape[0]
    tokens = int((seq_lens - pre_lens).sum())
    tile = cfg.extend_tile or _next_pow2(tokens)
    if tile < tokens:
        raise ValueError(f"extend_tile {tile} is below the batch's {tokens} new tokens")
    warps = cfg.num_warps or TRITON_DEFAULT_WARPS
    out = torch.empty(tokens, dtype=torch.int64, device=pre_lens.device)
    grid = (bs,)

    def launch() -> torch.Tensor:
        handle = mod.alloc_extend_kernel[grid](
            pre_lens, seq_lens, last_loc, free_pages, out, _next_pow2(bs), page_size, tile,
            num_warps=warps,
        )  # fmt: skip
        _common.record(
            LAST_INFO, handle, kernels=1, kernel_names=["alloc_extend_kernel"],
            extend_tile=tile, num_warps=warps, programs=bs,
        )  # fmt: skip
        return out

    return launch
