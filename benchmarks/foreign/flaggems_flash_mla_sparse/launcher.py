"""FlagGems' sparse MLA prefill (src/flag_gems/fused/flashmla_sparse.py, v5.0.2:
`triton_flash_mla_sparse_fwd`), launched as FlagGems' `flash_mla_sparse_fwd` launches it,
so that its launch choices are knobs.

FlagGems' drop-in for FlashMLA's `flash_mla_sparse_fwd`, DeepSeek-V3.2's sparse attention
over the indexer's top-k at prefill: q [sq, h, 576] (512 latent columns, then 64 rope
ones), one latent KV row per position shared by every head (kv [skv, 1, 576]) and each
query token's top-k positions (indices [sq, 1, topk] int32, -1 where fewer exist).  One
program per (query token, BLOCK_H heads) loads the heads' [BLOCK_H, 512] latent and
[BLOCK_H, 64] rope query blocks once in fp32, then walks the token's top-k list BLOCK_K
entries a step: it loads the step's indices, masks -1 and out-of-range ones, gathers those
rows of the KV transposed ([512, BLOCK_K] and [64, BLOCK_K], every row a whole 1,152-byte
row apart), scores them with two fp32 tl.dots (tf32 on the GPU) into one [BLOCK_H,
BLOCK_K] tile times sm_scale, updates an online softmax per head (natural exp, -inf guards)
and adds p x the gathered latent rows in a third tl.dot into an fp32 [BLOCK_H, 512]
accumulator.  Every step runs: FlagGems launches with is_causal off, so a short prefix's
-1 slots are loaded and masked, not skipped.  At the end each head's running maximum
(max_logits) and log-sum-exp are stored in fp32 and the normalized block in the q dtype.

FlagGems' launch: BLOCK_H = max(16, min(32, next_power_of_2(h))) = 32 at FlashMLA's 64 or
128 heads, BLOCK_K 16 ("used to be out of memory for 32"), and the first of its two
autotune entries, 8 warps and 4 stages (the other: 4 warps, 2 stages).  Knobs: `block_h`,
`block_k`, `num_warps`, `num_stages`, None keeping FlagGems'.  FlagGems asserts 64 or 128
heads and a 576- or 512-wide row; here any head count is taken (heads past h masked) and
any row wider than 512 (its rope tail padded to a power of two and masked), so the CPU
tests can run small.  Neither an attention sink nor per-token top-k lengths are passed
(DeepSeek-V3.2 has neither).  FlagGems allocates the outputs per call; here they are made
in `prepare`.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import torch
import triton

from foreign import _common

LAST_INFO: dict[str, Any] = {}
FLAGGEMS_LAUNCH = {"block_k": 16, "num_warps": 8, "num_stages": 4}  # the first autotune entry
DV = 512  # FlagGems' d_v, asserted: the latent width, the rest of the row is rope
SM_SCALE = 192**-0.5  # DeepSeek-V3's q/k head width (128 nope + 64 rope) before the absorption
INT32_MAX = 2147483647


@dataclass(frozen=True)
class FlashMlaSparseConfig:
    block_h: int | None = None  # None: FlagGems' max(16, min(32, next_power_of_2(h)))
    block_k: int | None = None  # None: FlagGems' 16 (top-k entries per step)
    num_warps: int | None = None  # None: FlagGems' first autotune entry, 8
    num_stages: int | None = None  # None: FlagGems' first autotune entry, 4


def flaggems_block_h(h: int) -> int:
    """FlagGems' heads per program: BH = max(16, min(32, next_power_of_2(G)))."""
    return max(16, min(32, triton.next_power_of_2(h)))


def prepare(
    cfg: FlashMlaSparseConfig,
    q: torch.Tensor,
    kv: torch.Tensor,
    indices: torch.Tensor,
) -> Callable[[], tuple[torch.Tensor, torch.Tensor, torch.Tensor]]:
    mod = _common.load_source("flaggems_flash_mla_sparse")
    if q.dim() != 3 or kv.dim() != 3 or indices.dim() != 3:
        raise ValueError("q [sq, h, d], kv [skv, 1, d], indices [sq, 1, topk]")
    sq, h, d = q.shape
    skv, vg, _ = kv.shape
    topk = indices.shape[-1]
    if vg != 1 or kv.shape[-1] != d or indices.shape[:2] != (sq, vg):
        raise ValueError("one KV head, the rows as wide as q's, one index list per token")
    if d <= DV:
        raise ValueError(f"the rows must hold rope columns past the {DV} latent ones")
    td = d - DV
    block_h = int(cfg.block_h) if cfg.block_h is not None else flaggems_block_h(h)
    block_k, warps, stages = (
        int(getattr(cfg, n)) if getattr(cfg, n) is not None else FLAGGEMS_LAUNCH[n]
        for n in ("block_k", "num_warps", "num_stages")
    )
    nh = -(-h // block_h)
    output = torch.zeros((sq, h, DV), device=q.device, dtype=q.dtype)
    max_logits = torch.full((sq, h), float("-inf"), device=q.device, dtype=torch.float32)
    lse = torch.full((sq, h), float("-inf"), device=q.device, dtype=torch.float32)
    grid = (sq, vg * nh, 1)
    kernel = mod.triton_flash_mla_sparse_fwd

    def launch() -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        handle = kernel[grid](
            q, kv, indices, None, None, SM_SCALE, output, max_logits, lse,
            q.stride(1), q.stride(0), q.stride(2),
            kv.stride(1), kv.stride(0), kv.stride(2),
            indices.stride(1), indices.stride(0), indices.stride(2),
            0, 0,
            output.stride(1), output.stride(0), output.stride(2),
            max_logits.stride(1), max_logits.stride(0),
            lse.stride(1), lse.stride(0),
            sq, skv, topk, DV, td, triton.next_power_of_2(DV), triton.next_power_of_2(td),
            h // vg, block_k, block_h,
            False, q.numel() > INT32_MAX, output.numel() > INT32_MAX, False, False,
            num_warps=warps, num_stages=stages,
        )  # fmt: skip
        _common.record(
            LAST_INFO, handle, kernels=1, kernel_names=["triton_flash_mla_sparse_fwd"],
            block_h=block_h, block_k=block_k, num_warps=warps, num_stages=stages,
            programs=sq * nh, metrics={"heads_per_program": min(block_h, h)},
        )  # fmt: skip
        return output, max_logits, lse

    return launch
