"""triton_v2: tensor-core tiles over many heads — 64 query rows per program, KV tile read once.

Change from v1: a program owns BLOCK_M=64 query rows (heads x positions folded) instead of
one, and computes scores and output with ``tl.dot`` (wgmma on Hopper). Each KV tile is loaded
once per 64 rows instead of once per row. No split: the grid is only b * ceil(s*h/64).
"""

from __future__ import annotations

import torch

from kernels.mla_decode.triton_tiled import TiledConfig, run_tiled

VERSION = "triton_v2"
DESCRIPTION = "64 rows (heads x positions) per program, tl.dot tensor-core tiles, no split"
CONFIG = TiledConfig(block_m=64, block_n=32, num_warps=8, num_stages=1, splits=1)


def mla_decode(
    q: torch.Tensor, kv_cache: torch.Tensor, cache_seqlens: torch.Tensor, sm_scale: float
) -> torch.Tensor:
    return run_tiled(CONFIG, q, kv_cache, cache_seqlens, sm_scale)
