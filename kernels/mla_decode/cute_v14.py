"""CuTe DSL MLA decode, version 14: cute_v13 with warpgroup 1's two P@V products issued
before warpgroup 0's P1 V_b, the order FlashMLA's dense sm90 decode enforces.

**What separates cute_v13 from FlashMLA's per-pair schedule** (FlashMLA's
``csrc/sm90/decode/dense/splitkv_mla.cuh`` and ``traits.h``, read, not copied). Same in both:
the seesaw (tile a scored by warpgroup 0, tile b by warpgroup 1, each owning half of O's
columns), two 64-row stages, one transaction mbarrier per 64-column slice, the scorer waiting
on each slice just before its four k16 steps, Q's rope columns in registers with P1 over
them in shared memory, four cross-warpgroup named barriers per pair, no ``setmaxnreg`` (both
warpgroups compute; FlashMLA 240 registers under ncu, cute_v13 228 from ptxas).

1. *Who issues the refills.* FlashMLA: thread 0 of the releasing warpgroup, right after its own
   ``wgmma.wait_group``, with no warpgroup barrier. cute_v13: one converged warp (CuTe DSL's TMA
   copy is an ``elect.sync`` over the warp) after a 128-thread ``bar.sync``. The split differs
   in one slice: FlashMLA's warpgroup 1 refills the rope slice of both stages, cute_v13's
   warpgroup 0 refills stage 0's rope with its slices 0-3.
2. *Who arms a slice barrier.* FlashMLA: the scorer's thread 0 arrives with ``expect_tx`` just
   before it waits; cute_v13: the issuing warp before the copy. Equivalent protocols.
3. *What lets warpgroup 0 read P1 (the tensor-pipe order in the pair's tail).* FlashMLA's
   warpgroup 0 crosses a barrier that warpgroup 1 arrives at only after it has *issued* both
   its P@V products (P_b V_b[:, 256:] from registers, P0 V_a[:, 256:] from shared memory), so
   the four P@V of a pair reach the tensor pipe as P_a V_a lo, P_b V_b hi, P0 V_a hi, P1 V_b
   lo. cute_v13's P1_READY is arrived at as soon as P1 is stored, so warpgroup 0's P1 V_b lo
   and warpgroup 1's P0 V_a hi are both released by warpgroup 0's own P0_READY arrival and race
   (warpgroup 0 just continues; warpgroup 1 must wake from its ``bar.sync`` and poll four slice
   barriers first), so P0 V_a hi likely goes last (inferred from the code, not measured).
4. *Where the softmax sits.* Same in both (each softmax after its own ``wait_group(0)`` on its
   score product; warpgroup 0 posts its maximum first). Small shifts: FlashMLA's warpgroup 0
   rescales O after the barrier of item 3 (cute_v13: after MAX_B) and issues its stage 0
   refill after warpgroup 1's maximum arrives (cute_v13: earlier, as soon as P_a V_a is done);
   cute_v13 polls four slice barriers again before the other warpgroup's P@V, FlashMLA relies
   on the named barrier.
5. *The last partial tile.* FlashMLA compiles the last one or two tiles as separate template
   instances and zeroes the out-of-range V rows per half, by the warpgroup about to read that
   half, just before its P@V; cute_v13's scorer waits for all eight latent slices and zeroes
   before its score product (that tile loses its load overlap; no such tile at t = 4096).
6. *Between work items.* FlashMLA is persistent (at most one CTA per SM walking (sequence, row
   block, KV range) items), loads the next item's Q by TMA before it stores O, stages O in
   shared memory for TMA / bulk stores, and hands over to its combine kernel with programmatic
   dependent launch; cute_v13 launches one CTA per (row block, split, sequence), copies Q with
   ``cp.async``, writes O from registers and merges splits in the kernel. FlashMLA also marks
   its KV boxes ``EVICT_FIRST``.

**The change (item 3, nothing else).** Warpgroup 1 arrives at P1_READY after it has issued
P0 V_a[:, 256:] (and P_b V_b[:, 256:] before it) instead of right after storing P1; warpgroup
0 still syncs on P1_READY before P1 V_b[:, :256]. The barrier keeps its id and its place in
warpgroup 0's code; only the arrival moves, through ``p1_ready_after_own_pv`` on cute_v13's
kernel (a trace-time switch; cute_v13's PTX is unchanged, its fingerprint checks that).

**Why this one.** In a pair's tail the tensor pipe runs four 64 x 256 x 64 P@V products
(about 512 cycles each at the tensor peak of ~4,096 FLOP per cycle per SM). Stage 0's slices
4-7 of tile a+2 are refilled by warpgroup 1 only when P0 V_a[:, 256:] has completed, and
warpgroup 0's next score product needs them after its first 20 k16 steps (~640 cycles); that
score product must finish before warpgroup 0's next softmax, which starts the next pair: it is
on the critical path every pair. With P0 V_a hi last (cute_v13's likely order), that refill
is issued after all four P@V, with ~640 cycles of queued tensor work in front of its use:
about one TMA round trip of 32 KB from L2 at best, far less than one from DRAM. In FlashMLA's order it is issued
one P@V (~512 cycles) earlier and hidden behind P1 V_b lo plus those 20 k-steps (~1,150
cycles). The cost moves to stage 1's slices 0-3 (warpgroup 0 refills them after P1 V_b lo,
now one P@V later), which warpgroup 1 reads only in the second half of its score product,
which runs under warpgroup 0's next softmax: off the critical path. The profiles agree that
the gap is the tensor pipe's share inside a tile, not bytes: tensor pipe busy 78.5% at
speculative and 60.4% at decode for FlashMLA's main kernel
(``results/profiles/h200/mla_decode--flashmla--*.json``) against 59.5% / 46.2% for cute_v10
(the same seesaw on ``cp.async``) and 61.5% / 53.2% for cute_v7 (``ncu-20261203T1538Z``).
cute_v13's bimodal speculative timing (p20 1,035 us, median 1,085 us) fits an order that a
race decides, though that was not measured apart. Not chosen: the warpgroup barrier before
each refill (item 1: the four warps have just finished the same ``wait_group``, so it costs
their skew plus a few tens of cycles, mostly while the tensor pipe has queued work; and the
PTX ISA describes ``wgmma.wait_group`` per executing thread, so dropping it rests on
hardware behaviour, as cute_v13's docstring notes); the partial tile (item 5: none at the
measured shapes); persistence (item 6: the speculative grid's 7.76 waves lose ~3% to the tail,
and it is a far larger change).

**Barrier protocol.** cute_v13's, with P1_READY's arrival moved. Still deadlock-free: between
the old and the new arrival point warpgroup 1 waits only on P0_READY, which warpgroup 0 arrives
at before it syncs on P1_READY. Still no side arrives twice before the other synced once:
warpgroup 1's next arrival at P1_READY follows its next MAX_A sync, which follows warpgroup 0's
P1_READY sync. The P1 stores are fenced (``fence.proxy.async``) before the arrival as before,
and stage 1's slices 0-3, refilled by warpgroup 0 after P1 V_b, were read by warpgroup 1 for
S_b before that arrival, as before. Registers, shared memory, loads: cute_v13's.

**Prediction.** Against cute_v13 on GPU time: speculative 3-8% faster (the tensor pipe's share
up, the bimodal spread narrower), decode 0-4% faster (its refills come from DRAM, where even
~1,150 cycles of cover is short; cute_v7 stays ahead at decode). What could cancel it:
warpgroup 0 now waits for warpgroup 1 to wake from P0_READY and issue its P@V before it issues
P1 V_b and its next score product (a few hundred cycles of issue delay, normally hidden behind
P_b V_b hi in the pipe), and stage 1's slices 0-3 arrive one P@V later; if the tensor pipe
order in cute_v13 was already FlashMLA's, nothing changes.
"""

from kernels.mla_decode.cute_common import VersionHost
from kernels.mla_decode.cute_v10 import M_BLK, N_BLK
from kernels.mla_decode.cute_v13 import _MlaDecodeV13

VERSION = "cute_v14"
DESCRIPTION = (
    "CuTe DSL: cute_v13 with warpgroup 1 posting P1 only after issuing both its P@V "
    "products, so they reach the tensor pipe before warpgroup 0's (FlashMLA's order)"
)

__all__ = ["DESCRIPTION", "VERSION", "entry", "example_args", "mla_decode"]


class _MlaDecodeV14(_MlaDecodeV13):
    """cute_v13's kernel with warpgroup 1's P1_READY arrival after its two P@V (module doc)."""

    p1_ready_after_own_pv = True


_HOST = VersionHost(VERSION, _MlaDecodeV14(), M_BLK, N_BLK, merge_in_kernel=True, packed=True)
entry = _HOST.entry
example_args = _HOST.example_args
mla_decode = _HOST.mla_decode
