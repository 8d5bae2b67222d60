"""CuTe DSL MLA decode, version 22: cute_v21 without the mbarrier polls that each warpgroup
made before its P@V on the other warpgroup's tile, right after the named barrier that posts
that tile's P.

**Why.** The hottest instruction in cute_v21's warp-stall samples at speculative
(``results/stall-source-20261205T1450Z-NVIDIA-H100-80GB-HBM3-cute_v21.csv.gz``, read with
``scripts/stall_ledger.py``) is ``SYNCS.PHASECHK.TRANS64.TRYWAIT P0, [R9+URZ+0x38430]``,
6.1% of the samples. 0x38430 = 230,448 is ``s_full[4]`` of cute_v13's plan (the mbarriers
start at byte 230,416, eight bytes each, index ``9 * stage + slice``): stage 0, latent slice 4,
the first of the four slices warpgroup 1 polls before ``P0 V_a[:, 256:]``. In the SASS the
instruction directly follows ``BAR.SYNC 0x3, 0x100`` (P0_READY), and its samples are all
``barrier`` stalls (6,443 of 6,480), none ``long_sb``: the warps are parked at P0_READY
(ncu credits a barrier wait to the next instruction; the ledger's "named barrier 0x3,
6.1%" is the same samples), not on TMA bytes. Those four slices completed long before:
warpgroup 0 waited on them for its score product of tile a, which came before its P0_READY
arrival. FlashMLA's warpgroup 1 goes from ``sP0Ready`` straight to its remote-P product
(``warpgroup_cooperative_pv_gemm_remoteP`` in ``wg1_subroutine``,
``csrc/sm90/decode/dense/splitkv_mla.cuh``), and its warpgroup 0 likewise from
``rO1sP0sV0RIssued`` to ``P1 V_b``; neither polls a TMA barrier there. In cute_v21 each of
these two hand-overs is followed by four polls (``try_wait`` in a retry loop with its
``BSSY``/``BSYNC`` reconvergence and the descriptor copies behind it) on the path from the
partner's arrival to the next wgmma, which is what the hand-over exists to start.

**The change.** ``remote_pv_waits_slices`` off on cute_v13's kernel: warpgroup 1's four polls
after P0_READY and warpgroup 0's four after P1_READY go. Ordering: the scorer of the tile
waited on all nine slices (acquiring the TMA's bytes) before its score product, and it
arrives at P0_READY / P1_READY only after that product; ``bar.arrive`` / ``bar.sync`` order
what the arriving threads observed before what the syncing threads do next, so the
partner's wgmmas read bytes already visible. A partial tile's zeros are written and fenced
by its scorer before its score product, as before. Everything else is cute_v21's.

**Checked on the CPU.** PTX: the four polls after each of the two syncs are gone and no
other (a test reads cute_v21's and this PTX). SASS
(``results/ptx/mla-sass-structure-20261205T152201Z.json``): the same MMAs, TMA loads and
barriers, no spill; as CuTe DSL's ptxas assembles it, warpgroup 0's loop is 17 instructions
shorter, but warpgroup 1's 43 longer, that assembler now putting a ``BSSY``/``BSYNC`` pair
around each slice poll of warpgroup 1's score product (as it already did in warpgroup 0's).

**Prediction.** Small: the polls cost some tens of cycles each on the path from a
hand-over to the partner's P@V issue, once per pair on each side, less what the extra
reconvergence in warpgroup 1's score product costs; at speculative and b=128 -0.5% to +1.5%
against cute_v21, at decode -0.5% to +1%. The wait at P0_READY itself (warpgroup 1 waiting
for warpgroup 0's P0, whose path includes waiting for its own P_a V_a product, as in
FlashMLA) is not changed by this version.
"""

from kernels.mla_decode.cute_common import VersionHost
from kernels.mla_decode.cute_v10 import M_BLK, N_BLK
from kernels.mla_decode.cute_v21 import _MlaDecodeV21

VERSION = "cute_v22"
DESCRIPTION = (
    "CuTe DSL: cute_v21 with each P@V on the other warpgroup's tile issued right after its "
    "hand-over barrier, without polling that tile's slice mbarriers (FlashMLA's way)"
)

__all__ = ["DESCRIPTION", "VERSION", "entry", "example_args", "mla_decode"]


class _MlaDecodeV22(_MlaDecodeV21):
    """cute_v21's kernel with ``remote_pv_waits_slices`` off (module doc)."""

    remote_pv_waits_slices = False


_HOST = VersionHost(VERSION, _MlaDecodeV22(), M_BLK, N_BLK, merge_in_kernel=True, packed=True)
entry = _HOST.entry
example_args = _HOST.example_args
mla_decode = _HOST.mla_decode
