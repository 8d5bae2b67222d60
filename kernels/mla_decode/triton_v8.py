"""triton_v8: FA3-style software pipelining of the scores (next tile's Q@K^T before this P@V).

Change from v7: inside the loop the scores of tile i+1 are issued to the tensor cores before
the P@V of tile i, so wgmma for the next scores can run while the current softmax is computed
(the result is only waited for in the next iteration). The V tile is loaded again through TMA
(from L2) for P@V instead of keeping the shared-memory tile that served as K alive past the
next tile's load: more shared-memory buffers per stage, so the KV tile is 32 rows with 2
stages (Q 72 KB + 2 x 69 KB).
"""

from __future__ import annotations

import torch

from kernels.mla_decode.triton_tiled import TiledConfig, run_tiled

VERSION = "triton_v8"
DESCRIPTION = "v7 + next-tile scores issued before P@V (FA3 intra-warpgroup pipelining)"
CONFIG = TiledConfig(
    block_m=64, block_n=32, num_warps=8, num_stages=2, splits=None, use_tma=True, pipe_qk=True
)


def mla_decode(
    q: torch.Tensor, kv_cache: torch.Tensor, cache_seqlens: torch.Tensor, sm_scale: float
) -> torch.Tensor:
    return run_tiled(CONFIG, q, kv_cache, cache_seqlens, sm_scale)
