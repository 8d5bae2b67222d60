"""triton_v6: TMA tensor descriptors for Q and KV tiles.

Change from v5: KV and Q tiles arrive through Hopper's bulk tensor copy engine
(``tl.make_tensor_descriptor``) instead of per-thread pointer loads: fewer address
registers and instructions, hardware out-of-bounds fill. The 512-wide latent part moves as
two 256-wide boxes (TMA's box limit), so the accumulator is two [64, 256] halves.
"""

from __future__ import annotations

import torch

from kernels.mla_decode.triton_tiled import TiledConfig, run_tiled

VERSION = "triton_v6"
DESCRIPTION = "v5 + TMA tensor descriptors for Q/KV tiles (two 256-wide latent boxes)"
CONFIG = TiledConfig(block_m=64, block_n=32, num_warps=8, num_stages=3, splits=None, use_tma=True)


def mla_decode(
    q: torch.Tensor, kv_cache: torch.Tensor, cache_seqlens: torch.Tensor, sm_scale: float
) -> torch.Tensor:
    return run_tiled(CONFIG, q, kv_cache, cache_seqlens, sm_scale)
