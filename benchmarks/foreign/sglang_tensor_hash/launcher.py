"""SGLang's multimodal tensor hash (python/sglang/srt/layers/multimodal.py, v0.5.9:
`hash_tiles32_kernel_blocked`, then `add_tree_reduce_u64_kernel`), launched as SGLang's
`gpu_tensor_hash` launches them, so that the hash kernel's launch choices are knobs.

The tensor's bytes are read as 32-bit words; one program per TILE words walks its tile in
BLOCK-word steps (a tl.static_range, unrolled), mixes each word with its index and two seeds
into two MurmurHash3-style 32-bit hashes (an fmix32 each), sums each over the tile (uint32,
wrapping), finishes both with the byte count and another fmix32, and stores them as one
uint64 per tile.  The partial values are then summed modulo 2^64 by the tree kernel, 1024
per program (unrolled), level after level until one is left: one level for up to a million
tiles.

SGLang's launch (gpu_tensor_hash's defaults): 8192-word tiles in 256-word steps, 4 warps, 4
stages, loads with the .cg cache modifier (cache in L2 only), the tree 1024 values per
program.  Knobs: the step, the warps, the stages and the cache modifier, None keeping
SGLang's.  The tile is no knob: each tile's hash is finished on its own, so the tile size is
part of the hash's definition (another tile gives another hash); the tree's chunk stays
SGLang's 1024.  The per-tile buffers that SGLang
allocates in every call are made in `prepare`; the timed call returns the device's 64-bit
sum (as its eight bytes, a view), and SGLang's `.item()` and host-side splitmix64 of it are
left out.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import torch
import triton

from foreign import _common

LAST_INFO: dict[str, Any] = {}
SGLANG_TILE = 8192  # gpu_tensor_hash(tile_words=8192)
SGLANG_BLOCK = 256  # block_words=256
SGLANG_WARPS = 4  # num_warps=4
SGLANG_STAGES = 4  # num_stages=4
SGLANG_USE_CG = True  # use_cg=True
REDUCE_CHUNK = 1024  # reduce_chunk=1024


@dataclass(frozen=True)
class TensorHashConfig:
    block_words: int | None = None  # None: SGLang's 256
    num_warps: int | None = None  # None: SGLang's 4
    num_stages: int | None = None  # None: SGLang's 4
    use_cg: bool | None = None  # None: SGLang's True


def prepare(cfg: TensorHashConfig, pixels: torch.Tensor, seed: int) -> Callable[[], torch.Tensor]:
    mod = _common.load_source("sglang_tensor_hash")
    from foreign.sglang_tensor_hash import reference

    if not pixels.is_contiguous() or (pixels.numel() * pixels.element_size()) % 4:
        raise ValueError("the tensor must be contiguous and a whole number of 32-bit words")
    u32 = pixels.view(torch.uint8).reshape(-1).view(torch.uint32)
    n = u32.numel()
    tile = SGLANG_TILE
    block = cfg.block_words or SGLANG_BLOCK
    if tile % block:
        raise ValueError("block_words must divide the 8192-word tile")
    warps = cfg.num_warps or SGLANG_WARPS
    stages = cfg.num_stages or SGLANG_STAGES
    use_cg = SGLANG_USE_CG if cfg.use_cg is None else cfg.use_cg
    s1, s2 = reference.seeds(seed)
    grid1 = (triton.cdiv(n, tile),)
    partials = torch.empty(grid1[0], dtype=torch.uint64, device=pixels.device)
    levels = []  # (input, output, its grid) of each tree level
    cur = partials
    while cur.numel() > 1:
        nxt = torch.empty(triton.cdiv(cur.numel(), REDUCE_CHUNK), dtype=torch.uint64,
                          device=pixels.device)  # fmt: skip
        levels.append((cur, nxt, (nxt.numel(),)))
        cur = nxt
    result = cur

    def launch() -> torch.Tensor:
        handle = mod.hash_tiles32_kernel_blocked[grid1](
            u32, partials, n, seed1=s1, seed2=s2,
            FM_C1=mod.FMIX32_C1, FM_C2=mod.FMIX32_C2, POS_A=mod.POS_C1, POS_B=mod.POS_C2,
            TILE=tile, BLOCK=block, USE_CG=use_cg, num_warps=warps, num_stages=stages,
        )  # fmt: skip
        for src, dst, grid2 in levels:
            mod.add_tree_reduce_u64_kernel[grid2](src, dst, src.numel(), CHUNK=REDUCE_CHUNK)
        _common.record(
            LAST_INFO, handle, kernels=1 + len(levels),
            kernel_names=["hash_tiles32_kernel_blocked"]
            + ["add_tree_reduce_u64_kernel"] * len(levels),
            tile_words=tile, block_words=block, num_warps=warps, num_stages=stages,
            use_cg=use_cg, programs=grid1[0],
        )  # fmt: skip
        return result.view(torch.uint8)  # the 64-bit sum's eight bytes

    return launch
