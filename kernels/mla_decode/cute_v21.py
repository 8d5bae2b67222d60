"""CuTe DSL MLA decode, version 21: cute_v20 with each TMA refill issued by its warp right
after that warp's own wgmma wait, without first meeting the other three warps of its
warpgroup at a warpgroup-local barrier.

**Why.** Four times per pair of KV tiles (twice per warpgroup) a stage is refilled once the
warpgroup's products have read it; cute_v13 to v20 put a 128-thread ``bar.sync`` (named
barriers 7 and 8) between the wgmma wait and the one warp that issues the TMA copies. In
cute_v17's warp-stall samples at speculative
(``results/stall-source-20261205T0446Z-NVIDIA-H200-cute_v17.csv.gz``, read with
``scripts/stall_ledger.py``) those two barriers hold 1.3% of the samples. FlashMLA issues its
refills from one thread straight after its own ``warpgroup_wait`` (``launch_kv_tiles_copy_tma``
after ``cute::warpgroup_wait<1>()`` in ``wg1_subroutine`` of its
``csrc/sm90/decode/dense/splitkv_mla.cuh``), as CUTLASS's sm90 pipelines release a stage from
one thread per consumer warpgroup in cluster mode: a warpgroup's wgmma is one operation, and
its completion, which every warp's wait observes, means every warp's share of it has read
the stage.

**The change.** ``refill_without_wg_sync`` on cute_v13's kernel drops those four barriers;
the warpgroup-local barrier of a partial tile's zero fill stays. Everything else is
cute_v20's.

**Prediction.** At most the barriers' share: at speculative 0-1.5% faster than cute_v20, at
decode 0-1%. Its GPU correctness tests (several shapes, partial last tiles) come first.
"""

from kernels.mla_decode.cute_common import VersionHost
from kernels.mla_decode.cute_v10 import M_BLK, N_BLK
from kernels.mla_decode.cute_v20 import _MlaDecodeV20

VERSION = "cute_v21"
DESCRIPTION = (
    "CuTe DSL: cute_v20 with each TMA refill issued right after the issuing warp's own wgmma "
    "wait, without a warpgroup-local barrier first (FlashMLA's way)"
)

__all__ = ["DESCRIPTION", "VERSION", "entry", "example_args", "mla_decode"]


class _MlaDecodeV21(_MlaDecodeV20):
    """cute_v20's kernel with ``refill_without_wg_sync`` on (module doc)."""

    refill_without_wg_sync = True


_HOST = VersionHost(VERSION, _MlaDecodeV21(), M_BLK, N_BLK, merge_in_kernel=True, packed=True)
entry = _HOST.entry
example_args = _HOST.example_args
mla_decode = _HOST.mla_decode
