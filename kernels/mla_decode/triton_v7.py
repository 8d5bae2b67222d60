"""triton_v7: 64-row KV tiles (BLOCK_N 32 -> 64) with two pipeline stages.

Change from v6: each loop iteration multiplies a 64-row KV tile instead of 32: the score
wgmma of each of the two warpgroups widens from N=16 to N=32 (the 64-wide score tile is split
between them), the P@V chain of m64n128k16 instructions doubles in length (K 32 -> 64), and
there are half as many online-softmax rescales and barriers per KV row (checked by compiling
for sm_90 with Triton 3.6). Shared memory then holds only two
stages (Q 72 KB + 2 x 72 KB KV = 216 KB of the 227 KB limit; three stages do not fit).
"""

from __future__ import annotations

import torch

from kernels.mla_decode.triton_tiled import TiledConfig, run_tiled

VERSION = "triton_v7"
DESCRIPTION = "v6 with 64-row KV tiles (2 stages: smem-bound), TMA"
CONFIG = TiledConfig(block_m=64, block_n=64, num_warps=8, num_stages=2, splits=None, use_tma=True)


def mla_decode(
    q: torch.Tensor, kv_cache: torch.Tensor, cache_seqlens: torch.Tensor, sm_scale: float
) -> torch.Tensor:
    return run_tiled(CONFIG, q, kv_cache, cache_seqlens, sm_scale)
