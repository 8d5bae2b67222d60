"""triton_v3: split-KV with a combine stage (fixed 8 splits, as SGLang's kernel uses).

Change from v2: the KV length of each sequence is cut into 8 slices, one program per
(row tile, slice, batch); each writes a normalised partial output and its log-sum-exp, and a
second kernel merges them. More programs for small batches, at the cost of the partials'
traffic (b*s*h*8*512*4 bytes written and read again).
"""

from __future__ import annotations

import torch

from kernels.mla_decode.triton_tiled import TiledConfig, run_tiled

VERSION = "triton_v3"
DESCRIPTION = "v2 + split-KV (8 fixed splits) with a log-sum-exp combine kernel"
CONFIG = TiledConfig(block_m=64, block_n=32, num_warps=8, num_stages=1, splits=8)


def mla_decode(
    q: torch.Tensor, kv_cache: torch.Tensor, cache_seqlens: torch.Tensor, sm_scale: float
) -> torch.Tensor:
    return run_tiled(CONFIG, q, kv_cache, cache_seqlens, sm_scale)
