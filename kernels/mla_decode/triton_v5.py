"""triton_v5: software pipelining of the KV tiles (num_stages=3).

Change from v4: Triton's pipeliner keeps 2 KV tiles in flight (cp.async into shared memory)
while the current one is multiplied, hiding HBM latency with one program per SM.
"""

from __future__ import annotations

import torch

from kernels.mla_decode.triton_tiled import TiledConfig, run_tiled

VERSION = "triton_v5"
DESCRIPTION = "v4 + num_stages=3 software pipelining of KV tiles"
CONFIG = TiledConfig(block_m=64, block_n=32, num_warps=8, num_stages=3, splits=None)


def mla_decode(
    q: torch.Tensor, kv_cache: torch.Tensor, cache_seqlens: torch.Tensor, sm_scale: float
) -> torch.Tensor:
    return run_tiled(CONFIG, q, kv_cache, cache_seqlens, sm_scale)
