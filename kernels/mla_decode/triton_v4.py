"""triton_v4: split count sized from the SM count and the batch.

Change from v3: instead of a fixed 8, the split count is the smallest that gives one program
per SM (132 on an H200): b * row_tiles * splits ~ n_sm, and 1 when the row tiles alone fill
the GPU (speculative decoding). Fewer partials to write and combine, one wave of programs.
"""

from __future__ import annotations

import torch

from kernels.mla_decode.triton_tiled import TiledConfig, run_tiled

VERSION = "triton_v4"
DESCRIPTION = "v3 with the split count sized from SM count and batch (one wave)"
CONFIG = TiledConfig(block_m=64, block_n=32, num_warps=8, num_stages=1, splits=None)


def mla_decode(
    q: torch.Tensor, kv_cache: torch.Tensor, cache_seqlens: torch.Tensor, sm_scale: float
) -> torch.Tensor:
    return run_tiled(CONFIG, q, kv_cache, cache_seqlens, sm_scale)
