"""FlagGems' MLA decode kernel (src/flag_gems/fused/flash_mla.py, v5.0.2:
`flash_mla_attn_kernel`), launched as FlagGems' `flash_mla` launches it, so that its launch
choices are knobs.

One program per (BLOCK_H query heads, sequence): it loads the heads' [BLOCK_H, 512] latent
and [BLOCK_H, 64] rope query blocks once, then walks the whole context BLOCK_N rows at a
time, mapping each row through the sequence's block table to its page and slot, loading the
rows' 512 latent columns (the values, and transposed the keys' first part) and their 64
rope columns; scores = q_nope x k_nope + q_pe x k_pe in two tl.dots into one fp32 tile,
times d^-1/2, an online softmax per head, and p (cast to the KV dtype) x the latent rows in
a third tl.dot into an fp32 [BLOCK_H, 512] accumulator; a masked tail step takes the
context's remainder.  No split over the context: the grid is cdiv(h, BLOCK_H) x b.

FlagGems' launch on sm_90: BLOCK_H 64, BLOCK_N 64, 8 warps, 3 stages (sm_80: BLOCK_H 32,
2 stages).  Knobs: `block_h`, `block_n`, `num_warps`, `num_stages`, None keeping FlagGems'
Hopper choice.  The kernel's @triton.heuristics EVEN_H (h % BLOCK_H == 0: head loads and
stores unmasked) is dropped by the fetch and passed here as it computes it.  FlagGems
allocates the output per call; here it is made in `prepare`.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import torch

from foreign import _common

LAST_INFO: dict[str, Any] = {}
FLAGGEMS_LAUNCH = {"block_h": 64, "block_n": 64, "num_warps": 8, "num_stages": 3}  # sm_90
DV = 512  # FlagGems' dv for DeepSeek's MLA: the latent width, the rest is rope


@dataclass(frozen=True)
class FlashMlaConfig:
    block_h: int | None = None  # None: FlagGems' 64 on sm_90 (query heads per program)
    block_n: int | None = None  # None: FlagGems' 64 (KV rows per step)
    num_warps: int | None = None  # None: FlagGems' 8
    num_stages: int | None = None  # None: FlagGems' 3 on sm_90


def _pick(cfg: FlashMlaConfig, name: str) -> int:
    value = getattr(cfg, name)
    return int(value) if value is not None else FLAGGEMS_LAUNCH[name]


def prepare(
    cfg: FlashMlaConfig,
    q: torch.Tensor,
    kv_cache: torch.Tensor,
    block_table: torch.Tensor,
    cache_seqlens: torch.Tensor,
) -> Callable[[], torch.Tensor]:
    mod = _common.load_source("flaggems_flash_mla")
    if q.dim() != 3 or kv_cache.dim() != 3 or block_table.dim() != 2 or cache_seqlens.dim() != 1:
        raise ValueError("q [b, h, d], kv_cache [pages, page, d], block_table [b, p], seqlens [b]")
    b, h, d = q.shape
    page = kv_cache.shape[1]
    if d <= DV:
        raise ValueError(f"the rows must hold rope columns past the {DV} latent ones")
    block_h, block_n, warps, stages = (
        _pick(cfg, n) for n in ("block_h", "block_n", "num_warps", "num_stages")
    )
    kv = kv_cache.view(-1, d)  # FlagGems: blocked_k.view([-1, d])
    o = torch.empty(b, h, DV, dtype=q.dtype, device=q.device)
    grid = (-(-h // block_h), b)
    kernel = mod.flash_mla_attn_kernel

    def launch() -> torch.Tensor:
        handle = kernel[grid](
            q, kv, block_table, cache_seqlens, o, d**-0.5, h,
            q.stride(0), q.stride(1), kv.stride(-2), block_table.stride(0),
            o.stride(0), o.stride(1), o.stride(2),
            BLOCK_H=block_h, BLOCK_N=block_n, EVEN_H=h % block_h == 0, PAGE_SIZE=page,
            HEAD_DIM_V=DV, HEAD_DIM=d, num_warps=warps, num_stages=stages,
        )  # fmt: skip
        _common.record(
            LAST_INFO, handle, kernels=1, kernel_names=["flash_mla_attn_kernel"],
            block_h=block_h, block_n=block_n, num_warps=warps, num_stages=stages,
            programs=grid[0] * grid[1],
        )  # fmt: skip
        return o

    return launch
