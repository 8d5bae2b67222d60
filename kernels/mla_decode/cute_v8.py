"""CuTe DSL MLA decode, version 8: cute_v7 plus an L2 prefetch two KV tiles ahead.

With two shared-memory stages (Q takes 72 KB of the 227 KB), the cp.async copy of tile n+1 is
issued while tile n is computed, so a copy has one step (~2 us) to arrive. At decode size each
KV tile is read from DRAM by the first of the two row-block CTAs that need it, and v7 spends
more cycles per tile at decode than in the speculative case, where 32 row blocks share every
tile through L2 (ncu, ``cute_20261202T140714Z``: ~4,700 vs ~3,700 cycles per tile). Here one
thread of warpgroup 1 also issues ``cp.async.bulk.prefetch.L2`` for tile n+2 (one instruction
for the tile's contiguous 72 KB), so the later cp.async finds the rows in L2. Kernels otherwise
v7's (same class, prefetch distance 2).
"""

from kernels.mla_decode.cute_common import VersionHost
from kernels.mla_decode.cute_v2 import M_BLK, N_BLK
from kernels.mla_decode.cute_v7 import _MlaDecodeV7

VERSION = "cute_v8"
DESCRIPTION = "CuTe DSL: cute_v7 with a bulk L2 prefetch of the KV tile two steps ahead"
L2_PREFETCH_DISTANCE = 2

__all__ = ["DESCRIPTION", "VERSION", "entry", "example_args", "mla_decode"]

_HOST = VersionHost(
    VERSION,
    _MlaDecodeV7(l2_prefetch_distance=L2_PREFETCH_DISTANCE),
    M_BLK,
    N_BLK,
    merge_in_kernel=True,
    packed=True,
)
entry = _HOST.entry
example_args = _HOST.example_args
mla_decode = _HOST.mla_decode
