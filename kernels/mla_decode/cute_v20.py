"""CuTe DSL MLA decode, version 20: cute_v19 with each warpgroup's P tile stored to shared
memory by ``stmatrix`` (four 8 x 8 bf16 matrices per warp instruction) instead of 32-bit
shared stores.

**Why.** Both stores sit on a hand-over path. Warpgroup 0 stores P0 between its MAX_B sync
and its P0_READY arrival, which warpgroup 1 waits for (6.0% of cute_v17's warp samples at
speculative, 5.9% of cute_v18's); warpgroup 1 stores P1 before it issues its own P@V and
posts P1_READY. ncu's executed-instruction counts at speculative
(``results/instruction-mix-20261205T0416Z-NVIDIA-H200.csv``) show the seesaw storing P with
4.7 M 32-bit ``STS`` where FlashMLA, whose schedule is otherwise the same (its
``save_rPb_to_sP`` in ``csrc/sm90/decode/dense/splitkv_mla.cuh``), uses 1.2 M ``STSM`` and
1.1 M ``STS``: a 64 x 64 bf16 tile is 16 stores per thread one way and 4 the other.

**The change.** ``p_stmatrix`` on cute_v13's kernel: a tiled copy built from
``StMatrix8x8x16bOp`` over the score MMA's accumulator layout, the P registers retiled to
its source layout, the same swizzled P0 / P1 buffers as destination (the layout the partner's
P@V reads is unchanged). Everything else is cute_v19's.

**Prediction.** A small step: the P0_READY and P1_READY waits shrink by the stores' issue
time, at speculative 0-2% faster than cute_v19, at decode 0-1%. Its GPU correctness tests
come first, since the copy's layout is only checked there.
"""

from kernels.mla_decode.cute_common import VersionHost
from kernels.mla_decode.cute_v10 import M_BLK, N_BLK
from kernels.mla_decode.cute_v19 import _MlaDecodeV19

VERSION = "cute_v20"
DESCRIPTION = (
    "CuTe DSL: cute_v19 with each warpgroup's P tile stored to shared memory by stmatrix "
    "instead of 32-bit shared stores (FlashMLA's way)"
)

__all__ = ["DESCRIPTION", "VERSION", "entry", "example_args", "mla_decode"]


class _MlaDecodeV20(_MlaDecodeV19):
    """cute_v19's kernel with ``p_stmatrix`` on (module doc)."""

    p_stmatrix = True


_HOST = VersionHost(VERSION, _MlaDecodeV20(), M_BLK, N_BLK, merge_in_kernel=True, packed=True)
entry = _HOST.entry
example_args = _HOST.example_args
mla_decode = _HOST.mla_decode
