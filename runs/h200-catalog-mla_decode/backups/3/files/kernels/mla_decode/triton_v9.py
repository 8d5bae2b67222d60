"""triton_v9 — triton_v2 with splits 1 -> 4 (splits one_wave) (catalog move of split-kv-decode).

A copy of triton_v2 with only knob values changed (the catalog designer); triton_v2's notes follow.

triton_v2: tensor-core tiles over many heads — 64 query rows per program, KV tile read once.

Change from v1: a program owns BLOCK_M=64 query rows (heads x positions folded) instead of
one, and computes scores and output with ``tl.dot`` (wgmma on Hopper). Each KV tile is loaded
once per 64 rows instead of once per row. No split: the grid is only b * ceil(s*h/64).
"""

from __future__ import annotations

import torch

from kernels.mla_decode.triton_tiled import TiledConfig, run_tiled

VERSION = 'triton_v9'
DESCRIPTION = 'triton_v2 with splits 1 -> 4 (splits one_wave) (catalog move of split-kv-decode)'
CONFIG = TiledConfig(block_m=64, block_n=32, num_warps=8, num_stages=1, splits=4)


def mla_decode(
    q: torch.Tensor, kv_cache: torch.Tensor, cache_seqlens: torch.Tensor, sm_scale: float
) -> torch.Tensor:
    return run_tiled(CONFIG, q, kv_cache, cache_seqlens, sm_scale)
