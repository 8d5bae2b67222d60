"""CuTe DSL MLA decode, version 18: cute_v17 with warpgroup 0 rescaling its half of O after
it posts P0, not before: FlashMLA's order of that hand-over.

**Why.** ncu's warp-stall samples per SASS instruction at the speculative shape
(``results/stall-source-20261205T0446Z-NVIDIA-H200-*.csv.gz``, ``scripts/stall_ledger.py``)
put cute_v17's warps at its four hand-over barriers in 19.8% of its samples, against 6.8%
at FlashMLA's four; the second largest, 6.0%, is warpgroup 1 waiting at P0_READY. Between
MAX_B (when warpgroup 0 learns m_b) and its P0_READY arrival, cute_v17's warpgroup 0 rescales
both its P_a tile (64 x 64) and its 64 x 256 fp32 accumulator O0 by exp2(m_a - m_b) before it
stores P_a; FlashMLA's warpgroup 0 (``wg0_subroutine`` in its ``splitkv_mla.cuh``) scales
only P, stores it, posts it, and rescales O0 afterwards, just before the product that
accumulates into O0 next. Warpgroup 1 needs P_a, not O0, so the 128 multiplies per thread of
O0's rescale were on its critical path for nothing.

**The change.** ``rescale_o_after_p0_ready`` on cute_v13's kernel: the per-row factors are
kept in registers, P_a is scaled, stored and posted, and then O0 is rescaled, before
warpgroup 0 waits for P1_READY and issues P_b V_b into O0 (its last product, P_a V_a,
completed before MAX_B). Everything else is cute_v17's: the barrier protocol, loads, the
order of the products and the pinned score steps.

**Prediction.** The P0_READY wait shrinks by about the rescale's time; if warpgroup 1 then
issues P0 V_a sooner, the tensor pipe idles less per pair. At speculative 1-4% faster than
cute_v17, at decode 0-2% (its loads from DRAM dominate); the MAX_A wait (7.1%), which this
does not touch, stays.
"""

from kernels.mla_decode.cute_common import VersionHost
from kernels.mla_decode.cute_v10 import M_BLK, N_BLK
from kernels.mla_decode.cute_v17 import _MlaDecodeV17

VERSION = "cute_v18"
DESCRIPTION = (
    "CuTe DSL: cute_v17 with warpgroup 0 rescaling its half of O after posting P0 rather "
    "than before, so warpgroup 1's wait for P0 no longer includes that rescale"
)

__all__ = ["DESCRIPTION", "VERSION", "entry", "example_args", "mla_decode"]


class _MlaDecodeV18(_MlaDecodeV17):
    """cute_v17's kernel with ``rescale_o_after_p0_ready`` on (module doc)."""

    rescale_o_after_p0_ready = True


_HOST = VersionHost(VERSION, _MlaDecodeV18(), M_BLK, N_BLK, merge_in_kernel=True, packed=True)
entry = _HOST.entry
example_args = _HOST.example_args
mla_decode = _HOST.mla_decode
