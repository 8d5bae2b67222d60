"""CuTe DSL MLA decode, version 13: cute_v10's seesaw schedule on TMA loads, with one
transaction mbarrier per 64-column slice.

**What changed from cute_v10 (its parent).** The schedule is v10's: the KV tiles of a CTA go
in pairs (a, b) = (2i, 2i+1), tile a in shared-memory stage 0 scored by warpgroup 0, tile b in
stage 1 scored by warpgroup 1; each warpgroup owns half of O's 512 columns and multiplies both
tiles' P by its half of V (its own P from registers, the other's from shared memory); the two
agree on one running row maximum in a fixed order through the named barriers MAX_A, MAX_B,
P0_READY, P1_READY (v10's, unchanged, with v10's softmax, P exchange and epilogue). What
changes is how a stage is refilled and how a reader knows the bytes are there:

- v10: the 128 threads of the releasing warpgroup each issue ``cp.async`` copies (with a row
  predicate each), wait for them, and tell the other warpgroup through the named barriers
  KV0_HI / KV1_LO; the score product of the next pair waits for a whole 256-column half.
- here: one converged warp of the releasing warpgroup (warp 0 for warpgroup 0, warp 4 for
  warpgroup 1) issues the released columns as 64 x 64 TMA boxes (``cp.async.bulk.tensor``,
  128-byte swizzle, v12's box), each completing on its own transaction mbarrier; every reader
  of a slice waits on that slice's barrier just before the first wgmma that reads it. KV0_HI
  and KV1_LO are gone, and the score product starts on its first 64 columns while the rest of
  the tile still arrives.

The TMA atoms and views are v11's / v12's methods (``kv_load_args``, ``make_kv_tma``,
``make_latent_tma``, ``partition_kv_tma``, ``partition_latent_tma``), v10's ``softmax`` and the
in-kernel split merge of v7 are called unchanged; ``__call__`` and ``kernel`` are this module's.

**Who loads what, when (the release rule of v10, now one warp and TMA).** A warpgroup refills
the columns that it alone reads last, as soon as its own last wgmma on them has completed
(``wgmma.wait_group``) and all four of its warps have passed a warpgroup barrier (``bar.sync``
7 or 8, 128 threads: a wgmma's shared-memory reads are complete only when every warp of the
warpgroup has waited for it):

- warpgroup 0 after ``P_a V_a[:, :256]``: tile a+2's latent slices 0-3 and its rope slice
  into stage 0 (S_a already read them; nobody else reads them);
- warpgroup 0 after ``P1 V_b[:, :256]``: tile b+2's latent slices 0-3 into stage 1 (warpgroup
  1 read them for S_b before it posted P1);
- warpgroup 1 after ``P_b V_b[:, 256:]``: tile b+2's latent slices 4-7 and its rope slice into
  stage 1;
- warpgroup 1 after ``P0 V_a[:, 256:]``: tile a+2's latent slices 4-7 into stage 0 (warpgroup 0
  read them for S_a before it posted P0).

In the prologue warp 0 issues tile 0 into stage 0 (slices 0-3, rope, 4-7: the order warpgroup 0
reads them) and warp 4 tile 1 into stage 1 (slices 4-7, rope, 0-3), while both warpgroups
copy Q with ``cp.async`` as in v10.

**Barrier protocol.**

- ``s_full[9 s + j]``, stage s = 0, 1, slice j = 0..7 the latent columns ``[64 j, 64 j + 64)``,
  j = 8 the rope columns: 18 mbarriers of 8 bytes, initialised by thread 0 with an arrival
  count of 1, then ``fence.mbarrier_init`` and a CTA barrier before any use.
- Arming: for each slice, the elected lane of the issuing warp arrives with ``expect_tx`` of
  one box, 64 rows x 64 columns x 2 bytes = 8,192 bytes, and the warp issues the box with that
  barrier as its completion barrier (CuTe DSL 4.3.5 wraps the copy in ``elect.sync`` over the
  whole warp, so the warp is converged: a warp-uniform branch on the warp index). TMA counts
  the whole box even for rows past ``t_max`` (zero-filled), so every fill expects 8,192 bytes.
- Phases: stage 0 holds tile a of pair p as its p-th fill, stage 1 tile b of pair p as its
  p-th fill, so a wait for pair p's tiles is on parity ``p % 2`` and for the next pair's on
  ``(p + 1) % 2``. Waiters: the scorer of a stage waits on all nine barriers, slice j just
  before the k16 steps ``4 j .. 4 j + 3`` (its own columns first, then the rope, then the
  other warpgroup's columns); before ``P1 V_b[:, :256]`` warpgroup 0 waits on stage 1's
  slices 0-3, before ``P0 V_a[:, 256:]`` warpgroup 1 waits on stage 0's slices 4-7 (already
  complete: the scorer saw them; the wait makes the bytes visible to this warpgroup itself).
- No barrier runs two phases ahead of a waiter: a slice's next fill is issued by the last
  reader of the current fill, after its own wait and read, or (slices read by both
  warpgroups) after a named barrier that the other reader arrives at only after its own
  wait and read: P0_READY for stage 0's slices 4-7, P1_READY for stage 1's slices 0-3.
  Every fill that is armed is waited on (a fill is issued only for a tile < ``tile_end``, and
  that tile's scorer waits on all its slices), so no TMA is in flight when the CTA exits.
- The partial tile (the sequence ends inside it; at most one per CTA, none at t = 4096).
  Rows past the sequence's length hold arbitrary cache data (NaN in the tests). Their
  scores are masked to -inf by assignment (v10's softmax), but P = 0 times a NaN V row would
  still poison O, so, as in all earlier versions, those rows of the 512 latent columns are
  zeroed before any wgmma reads them as V: on that tile only (a uniform branch) the scorer
  waits for all eight latent slices before its score product, its 128 threads write the
  zeros, then ``fence.proxy.async.shared::cta`` and its warpgroup barrier. The other
  warpgroup reads that tile as V only after P0_READY / P1_READY, which the scorer arrives at
  after its score product, so no wgmma of either warpgroup reads those rows before the zeros.
  On that tile the score product does not overlap the loads.

**Named barriers.** 1-4 as in v10 (MAX_A, MAX_B, P0_READY, P1_READY; 128 threads arrive, 128
sync), 7 and 8 the warpgroup barriers (128 threads). Each of 1-4 is arrived at and synced once
per pair by each side, and no side can arrive twice before the other synced once: MAX_A's next
arrival follows warpgroup 0's MAX_B sync, MAX_B's follows warpgroup 1's next MAX_A sync,
P1_READY's follows warpgroup 1's next MAX_A sync (which follows warpgroup 0's P1_READY sync),
P0_READY's follows warpgroup 0's next MAX_B sync, which warpgroup 1 arrives at only after its
P0_READY sync of the pair before.

**Shared memory.** v10's plan plus 18 mbarriers: Q 64 KB (latent) + 8 KB (rope; after the
prologue it holds P1, Q's rope columns live in registers), two stages as two 256-column halves
of 32 KB each (128 KB), rope 2 x 8 KB, P0 8 KB, the two posted maxima and the row sums (1 KB),
merge flag 16 B, the mbarriers 144 B (bytes 230,416-230,559, read from the PTX): ~225 KB of
the 232,448 bytes an sm_90 CTA may use (``SharedStorage.size_in_bytes()`` at trace time). Each 64-column slice of a half is one
contiguous 8 KB block of the 128-byte-swizzled K-major layout, 1024-byte aligned, which is what
one TMA box writes.

**Registers.** v10's (O half 128 fp32, S 32, P 16, Q rope 16 per thread). ``ptxas
-arch=sm_90a -v`` (CUDA 13.0, on this module's PTX, CPU only): 228 registers for both output
dtypes, no spills, 9 named barriers (v10: 223); the GPU run's profile records the count of the
toolchain that launches it.

**Conservative choices, candidates for a later version.** The warpgroup barrier before each
refill (four per pair per warpgroup) orders the four warps' ``wgmma.wait_group`` before the
TMA overwrite; it may be unnecessary if a warpgroup's wgmma completes for all its warps at
once, which is not what the PTX documentation promises. The partial tile's zeros cost that
tile its load overlap.

**Prediction.** v10 lost to v7 (decode -13%, speculative -1%) because the next pair's first
columns arrived only after the pair released them, copied by the threads that also ran the
softmax and the products, and the score product waited for whole 256-column halves. Here a
release is one warp issuing five boxes (no per-thread address work), the score product starts
on the first slice a warpgroup loaded itself, and the other half is waited for slice by slice
behind 20 k16 steps of its own columns and the rope. Expected against cute_v7 on GPU time:
speculative 5-15% faster (the seesaw's overlap finally shows: tensor pipe busier than v7's
~62%), decode from -5% to +5% (its tiles come from DRAM and the two-stage ring still gives a
slice roughly one pair's worth of work to arrive; v7's loads run a whole step ahead, so decode
may still lag). Host time per call rises slightly over v7 (the two tensor maps are encoded
per call, as in v11/v12). What could cancel it: the release points still sit behind the
products that read the stage (one release per half-stage per pair), so a DRAM load exposed
once per pair at decode; 13 mbarrier polls per tile per warpgroup (nine before its score
product, four before its P@V of the other warpgroup's tile) and the warpgroup barriers.
"""

import functools
from typing import Any

import cuda.bindings.driver as cuda
import cutlass
import cutlass.cute as cute
import cutlass.utils
from cutlass.cute.nvgpu import cpasync, warpgroup

from kernels.mla_decode.cute_common import (
    VersionHost,
    acc_as_wgmma_a,
    g2s_tiled_copy,
    kv_tile_range,
    mla_counters_tensor,
    mla_global_tensors,
    mla_out_tensor,
    mla_smem_layouts,
    mn_view,
    pinned_index,
    quad_allreduce,
    wgmma_tiled,
)
from kernels.mla_decode.cute_v10 import (
    D_HALF,
    D_LAT,
    D_ROPE,
    K_HALF,
    M_BLK,
    MAX_A,
    MAX_B,
    N_BLK,
    P0_READY,
    P1_READY,
    STAGES,
    THREADS,
    WG_LOCAL,
    WG_THREADS,
    _MlaDecodeV10,
    _pv,
)
from kernels.mla_decode.cute_v11 import _MlaDecodeV11
from kernels.mla_decode.cute_v12 import _MlaDecodeV12

VERSION = "cute_v13"
DESCRIPTION = (
    "CuTe DSL: cute_v10's seesaw schedule with each released half-stage refilled by TMA from "
    "one warp of the releasing warpgroup, one transaction mbarrier per 64-column slice"
)

LATENT_SLICES = D_LAT // D_ROPE  # 8 boxes of 64 columns; slice 8 is the rope box
SLICES = LATENT_SLICES + 1
HALF_SLICES = LATENT_SLICES // 2  # slices of one warpgroup's 256 columns
K_PER_SLICE = D_ROPE // 16  # k16 wgmma steps per 64-column slice
# CUTLASS's CacheHintSm90::EVICT_FIRST (cute/arch/copy_sm90_desc.hpp): the opaque 64-bit L2
# policy FlashMLA's KV TMA copies carry (cute_v23, ``kv_evict_first``)
L2_EVICT_FIRST = 0x12F0000000000000
# The warp of each warpgroup that issues its TMA copies, as a whole converged warp
PRODUCER_WARP = (0, WG_THREADS // 32)


def _slice_waiter(s_full: cute.Pointer, stage: int, phase: Any) -> Any:
    """``wait(j)``: wait for slice ``j`` of ``stage`` at ``phase``, then ``wgmma.fence`` (the
    wait's spin loop sits between wgmmas that accumulate into the same registers; without the
    fence ptxas inserts one itself, see cute_v12)."""

    def wait(j: int) -> None:
        cute.arch.mbarrier_wait(s_full + (stage * SLICES + j), phase)
        warpgroup.fence()

    return wait


def _scores_sliced(
    ops: tuple[Any, ...], stage: int, half: int, first: bool, ready: Any, pin: bool = False
) -> None:
    """Issue S (+)= Q K^T for the tile in ``stage`` over the latent ``half`` (0: cols 0..255,
    1: 256..511; Q from shared memory), calling ``ready(j)`` before the four k16 steps of each
    64-column slice j; ``first`` (the product starts here) zeroes S and then adds the 4 rope
    k-steps (Q from registers, after ``ready(8)``). ``ops``: the score MMAs (latent from
    shared memory, rope from registers), the accumulator and the operand views, as v10's
    ``_scores`` takes them. Unrolled at trace time; the caller commits and waits. ``pin``
    (cute_v17): index each k step through ``pinned_index``, so that its descriptors are formed
    in uniform registers just before its wgmma (see ``cute_common.pinned_index``)."""
    mma_qk, mma_qk_rs, acc_s, t_aql, t_rq, t_bkl, t_bkh, t_bkr = ops
    qk = cute.make_mma_atom(mma_qk.op)
    qk.set(warpgroup.Field.ACCUMULATE, not first)
    t_bk = t_bkh if half else t_bkl
    for k in range(K_HALF):
        if k % K_PER_SLICE == 0:
            ready(half * HALF_SLICES + k // K_PER_SLICE)
        kk = pinned_index(k) if pin else k
        cute.gemm(
            qk, acc_s, t_aql[None, None, half * K_HALF + kk], t_bk[None, None, kk, stage], acc_s
        )
        qk.set(warpgroup.Field.ACCUMULATE, True)
    if first:
        ready(LATENT_SLICES)
        qk_rs = cute.make_mma_atom(mma_qk_rs.op)
        qk_rs.set(warpgroup.Field.ACCUMULATE, True)
        for k in range(cute.size(t_rq, mode=[2])):
            kk = pinned_index(k) if pin else k
            cute.gemm(qk_rs, acc_s, t_rq[None, None, k], t_bkr[None, None, kk, stage], acc_s)


class _MlaDecodeV13(_MlaDecodeV10):
    """v10's seesaw kernel with TMA refills and a barrier per 64-column slice (module doc)."""

    # Warpgroup 1 arrives at P1_READY right after posting P1 (False, this version), or only
    # after it has also issued its two P@V products (True, cute_v14): a trace-time switch.
    p1_ready_after_own_pv = False
    # Warpgroup 0 rescales O0 from m_a to m_b before posting P0 (False), or right after
    # posting it (True, cute_v18: FlashMLA's order, so warpgroup 1's wait at P0_READY does not
    # include the rescale of a 64 x 256 accumulator): a trace-time switch.
    rescale_o_after_p0_ready = False
    # Each warpgroup posts its new row maximum and arrives at MAX_A / MAX_B after the whole
    # softmax of its tile (False), or as soon as the maximum is known, before the
    # exponentials, row sums and O rescale that its partner does not need (True, cute_v19):
    # a trace-time switch.
    post_max_first = False
    # Each warpgroup stores its P tile to shared memory (P0 for warpgroup 0, P1 for
    # warpgroup 1) with 32-bit shared stores in the accumulator's layout (False), or with
    # stmatrix, four 8 x 8 bf16 matrices per warp instruction (True, cute_v20: FlashMLA's
    # save_rPb_to_sP): a trace-time switch.
    p_stmatrix = False
    # Before a warp issues a TMA refill of a stage its warpgroup's products read last, the
    # warpgroup's four warps meet at a warpgroup-local barrier (False), or the issuing warp
    # goes on from its own wgmma wait, the products being one warpgroup-wide operation whose
    # completion every warp's wait observes (True, cute_v21: FlashMLA's refills, and CUTLASS
    # pipelines that release a stage from one thread per warpgroup): a trace-time switch.
    refill_without_wg_sync = False
    # Before its P@V on the other warpgroup's tile (warpgroup 0's P1 V_b[:, :256] after
    # P1_READY, warpgroup 1's P0 V_a[:, 256:] after P0_READY), a warpgroup waits on the four
    # slice mbarriers of its half of that tile's V itself (True), or relies on the scorer,
    # which waited on all nine slices before its score product and reached the named
    # barrier only after it (False, cute_v22: FlashMLA's remote P@V, which polls no TMA
    # barrier): a trace-time switch.
    remote_pv_waits_slices = True
    # Warpgroup 0 waits for its own P_a V_a[:, :256] (and refills stage 0's columns 0..255 and
    # rope) before it syncs on MAX_B and posts P0 (False), or only after it has posted P0
    # (True, cute_v29: the rescaled P_a goes to P0 from registers of its own, since the
    # in-flight P_a V_a still reads P_a's; needs ``rescale_o_after_p0_ready``, O0 being that
    # product's accumulator): a trace-time switch.
    p0_before_own_pv_wait = False
    # With ``p0_before_own_pv_wait`` on, the split kernel (fp32 partials, e.g. decode) takes
    # the early P0 post as well (True, cute_v29), or keeps the wait-and-refill-first order
    # (False, cute_v30: its tiles come from DRAM, where the later refill cost cute_v29 2.7%
    # at decode): a trace-time switch on the output's element type.
    p0_before_own_pv_wait_in_split = True
    # The KV tile copies (the eight 64 x 64 latent boxes and the rope box of each tile) are
    # issued with CuTe DSL's default L2 policy operand, 0 (False), or with the evict-first
    # policy (True, cute_v23: FlashMLA's ``launch_kv_tiles_copy_tma``,
    # ``CacheHintSm90::EVICT_FIRST``); Q (cp.async) and the output stores are unchanged: a
    # trace-time switch.
    kv_evict_first = False
    # With ``kv_evict_first`` on, every launch's KV copies carry the evict-first policy
    # (None, cute_v23), or only those of a launch whose grid has at most this many row-block
    # CTAs per (sequence, split), the CTAs that read the same KV tiles side by side; a launch
    # with more passes 0 (an int, cute_v24): a run-time select on the grid's x extent,
    # ``rows / M_BLK``, the number of row blocks, since one compile serves every shape.
    kv_evict_first_max_row_blocks: int | None = None
    # The running row maximum the two warpgroups share is every tile's new maximum, and O and
    # the row sums are rescaled on every tile (None), or it moves only when a tile's maximum
    # exceeds it by more than this many base-2 units, and each O rescale is skipped by a
    # warp-uniform branch when no row of the warp moved (a float, cute_v32: ``softmax_max``
    # reads it; the overrides are ``softmax_rest`` and ``rescale_o_after_p0``): a trace-time
    # switch.
    max_move_threshold: float | None = None

    # v11's TMA plumbing with v12's 64 x 64 latent box (plain methods, traced inline)
    kv_load_args = _MlaDecodeV11.kv_load_args
    make_kv_tma = _MlaDecodeV11.make_kv_tma
    partition_kv_tma = _MlaDecodeV11.partition_kv_tma
    make_latent_tma = _MlaDecodeV12.make_latent_tma
    partition_latent_tma = _MlaDecodeV12.partition_latent_tma

    @cute.jit
    def __call__(
        self,
        p_q: cute.Pointer,
        p_kv: cute.Pointer,
        p_lens: cute.Pointer,
        p_o: cute.Pointer,
        p_lse: cute.Pointer,
        p_out: cute.Pointer,
        p_sem: cute.Pointer,
        batch: cutlass.Int32,
        rows: cutlass.Int32,
        t_max: cutlass.Int32,
        splits: cutlass.Int32,
        tiles_per_split: cutlass.Int32,
        scale_log2: cutlass.Float32,
        stream: cuda.CUstream,
    ):
        dtype = p_q.dtype
        m_q, m_kv, m_lens, m_o, m_lse = mla_global_tensors(
            p_q, p_kv, p_lens, p_o, p_lse, batch, rows, t_max, splits
        )
        # v10's plan: Q latent/rope and P as in v7, the KV stages as two 256-column halves
        s_ql_layout, s_qr_layout, _, s_kr_layout, _, s_p_layout = mla_smem_layouts(
            dtype, M_BLK, N_BLK, STAGES
        )
        k_atom = warpgroup.make_smem_layout_atom(warpgroup.SmemLayoutAtomKind.K_SW128, dtype)
        mn_atom = warpgroup.make_smem_layout_atom(warpgroup.SmemLayoutAtomKind.MN_SW128, dtype)
        s_kh_layout = cute.tile_to_shape(k_atom, (N_BLK, D_HALF, STAGES), (0, 1, 2))
        s_vh_layout = cute.tile_to_shape(mn_atom, (D_HALF, N_BLK, STAGES), (1, 0, 2))
        # the TMA atoms (v12's 64 x 64 latent box, v11's rope box) and their global views
        kv_load_args = self.kv_load_args(p_kv, batch, t_max, s_kh_layout, s_kr_layout)

        @cute.struct
        class SharedStorage:
            s_ql: cute.struct.Align[cute.struct.MemRange[dtype, cute.cosize(s_ql_layout)], 1024]
            # Q's rope columns until both warpgroups hold them in registers, then P1
            s_qr: cute.struct.Align[cute.struct.MemRange[dtype, cute.cosize(s_qr_layout)], 1024]
            s_kl: cute.struct.Align[cute.struct.MemRange[dtype, cute.cosize(s_kh_layout)], 1024]
            s_kh: cute.struct.Align[cute.struct.MemRange[dtype, cute.cosize(s_kh_layout)], 1024]
            s_kr: cute.struct.Align[cute.struct.MemRange[dtype, cute.cosize(s_kr_layout)], 1024]
            s_p0: cute.struct.Align[cute.struct.MemRange[dtype, cute.cosize(s_p_layout)], 1024]
            s_max_a: cute.struct.Align[cute.struct.MemRange[cutlass.Float32, M_BLK], 16]
            s_max_b: cute.struct.Align[cute.struct.MemRange[cutlass.Float32, M_BLK], 16]
            s_sum: cute.struct.Align[cute.struct.MemRange[cutlass.Float32, 2 * M_BLK], 16]
            s_arrived: cute.struct.Align[cute.struct.MemRange[cutlass.Int32, 4], 16]
            s_full: cute.struct.Align[cute.struct.MemRange[cutlass.Int64, STAGES * SLICES], 8]

        g2s = g2s_tiled_copy(dtype, WG_THREADS)  # Q, and the partial tile's zeros
        k_major = warpgroup.OperandMajorMode.K
        mn_major = warpgroup.OperandMajorMode.MN
        ss = warpgroup.OperandSource.SMEM
        rs = warpgroup.OperandSource.RMEM
        mma_qk = wgmma_tiled(dtype, M_BLK, N_BLK, ss, k_major)  # S, latent columns
        mma_qk_rs = wgmma_tiled(dtype, M_BLK, N_BLK, rs, k_major)  # S, rope: Q in registers
        mma_pv_rs = wgmma_tiled(dtype, M_BLK, D_HALF, rs, mn_major)  # own P from registers
        mma_pv_ss = wgmma_tiled(dtype, M_BLK, D_HALF, ss, mn_major)  # the other's P from smem

        m_out = mla_out_tensor(p_out, batch, rows)
        m_sem = mla_counters_tensor(p_sem, batch, rows, M_BLK)
        self.kernel(
            m_q,
            m_kv,
            m_lens,
            m_o,
            m_lse,
            m_out,
            m_sem,
            *kv_load_args,
            tiles_per_split,
            scale_log2,
            s_ql_layout,
            s_qr_layout,
            s_kh_layout,
            s_kr_layout,
            s_vh_layout,
            s_p_layout,
            g2s,
            mma_qk,
            mma_qk_rs,
            mma_pv_rs,
            mma_pv_ss,
            SharedStorage,
        ).launch(
            grid=(rows // M_BLK, splits, batch),
            block=[THREADS, 1, 1],
            smem=SharedStorage.size_in_bytes(),
            stream=stream,
        )

    @cute.kernel
    def kernel(
        self,
        m_q: cute.Tensor,
        m_kv: cute.Tensor,
        m_lens: cute.Tensor,
        m_o: cute.Tensor,
        m_lse: cute.Tensor,
        m_out: cute.Tensor,
        m_sem: cute.Tensor,
        tma_kl: cute.CopyAtom,
        g_kl_tma: cute.Tensor,
        tma_kr: cute.CopyAtom,
        g_kr_tma: cute.Tensor,
        tiles_per_split: cutlass.Int32,
        scale_log2: cutlass.Float32,
        s_ql_layout: cute.ComposedLayout,
        s_qr_layout: cute.ComposedLayout,
        s_kh_layout: cute.ComposedLayout,
        s_kr_layout: cute.ComposedLayout,
        s_vh_layout: cute.ComposedLayout,
        s_p_layout: cute.ComposedLayout,
        g2s: cute.TiledCopy,
        mma_qk: cute.TiledMma,
        mma_qk_rs: cute.TiledMma,
        mma_pv_rs: cute.TiledMma,
        mma_pv_ss: cute.TiledMma,
        SharedStorage: cutlass.Constexpr,
    ):
        tidx, _, _ = cute.arch.thread_idx()
        m_block, split, bi = cute.arch.block_idx()
        dtype = m_q.element_type
        wg = tidx // WG_THREADS
        wg_tidx = tidx % WG_THREADS
        lane = cute.arch.lane_idx()
        warp_idx = cute.arch.make_warp_uniform(cute.arch.warp_idx())

        seqlen, tile_begin, tile_end, n_steps = kv_tile_range(
            m_lens, bi, split, tiles_per_split, N_BLK
        )
        n_pairs = (n_steps + 1) // 2
        # cute_v29's early P0 post, in this kernel (the split one writes fp32 partials)
        p0_early = self.posts_p0_before_own_pv_wait(m_o.element_type)

        q_b = m_q[bi, None, None]
        g_ql = cute.local_tile(q_b, (M_BLK, D_LAT), (m_block, 0))
        g_qr = cute.local_tile(q_b, (M_BLK, D_ROPE), (m_block, D_LAT // D_ROPE))

        smem = cutlass.utils.SmemAllocator()
        storage = smem.allocate(SharedStorage)
        s_ql = storage.s_ql.get_tensor(s_ql_layout.outer, swizzle=s_ql_layout.inner)
        s_qr = storage.s_qr.get_tensor(s_qr_layout.outer, swizzle=s_qr_layout.inner)
        s_p1 = storage.s_qr.get_tensor(s_p_layout.outer, swizzle=s_p_layout.inner)
        # the two column halves of both stages, each as K (scores) and as V^T (P@V)
        s_kl = storage.s_kl.get_tensor(s_kh_layout.outer, swizzle=s_kh_layout.inner)
        s_kh = storage.s_kh.get_tensor(s_kh_layout.outer, swizzle=s_kh_layout.inner)
        s_vl = storage.s_kl.get_tensor(s_vh_layout.outer, swizzle=s_vh_layout.inner)
        s_vh = storage.s_kh.get_tensor(s_vh_layout.outer, swizzle=s_vh_layout.inner)
        s_kr = storage.s_kr.get_tensor(s_kr_layout.outer, swizzle=s_kr_layout.inner)
        s_p0 = storage.s_p0.get_tensor(s_p_layout.outer, swizzle=s_p_layout.inner)
        s_max_a = storage.s_max_a.get_tensor(cute.make_layout((M_BLK,)))
        s_max_b = storage.s_max_b.get_tensor(cute.make_layout((M_BLK,)))
        s_sum = storage.s_sum.get_tensor(cute.make_layout((2, M_BLK), stride=(M_BLK, 1)))
        s_arrived = storage.s_arrived.get_tensor(cute.make_layout((4,)))
        s_full = storage.s_full.data_ptr()

        # TMA views: latent slices 0-3 of a stage live in s_kl, 4-7 in s_kh, rope in s_kr
        t_skl_tma, t_gk_tma, t_skr_tma, t_gkr_tma = self.partition_kv_tma(
            tma_kl, g_kl_tma, tma_kr, g_kr_tma, s_kl, s_kr, bi
        )
        t_skh_tma, _ = self.partition_latent_tma(tma_kl, g_kl_tma, s_kh, bi)
        tma = (tma_kl, tma_kr, t_gk_tma, t_skl_tma, t_skh_tma, t_gkr_tma, t_skr_tma)
        if cutlass.const_expr(self.kv_evict_first_max_row_blocks is not None):
            # cute_v24: the KV copies' L2 policy operand, chosen once per launch (kv_hint)
            tma = (*tma, self.kv_policy_for_grid())

        # thread copies (each warpgroup with its own 128 threads): Q, the partial tile's zeros
        thr_g2s = g2s.get_slice(wg_tidx)
        t_zl = thr_g2s.partition_D(s_kl)  # (CPY, n, k, STAGES)
        t_zh = thr_g2s.partition_D(s_kh)
        t_ckv = thr_g2s.partition_S(cute.make_identity_tensor((N_BLK, D_HALF)))

        # MMAs: every one spans one warpgroup
        thr_qk = mma_qk.get_slice(wg_tidx)
        thr_qk_rs = mma_qk_rs.get_slice(wg_tidx)
        thr_pv_rs = mma_pv_rs.get_slice(wg_tidx)
        thr_pv_ss = mma_pv_ss.get_slice(wg_tidx)
        t_aql = mma_qk.make_fragment_A(thr_qk.partition_A(s_ql))  # (MMA, M, K)
        t_bkl = mma_qk.make_fragment_B(thr_qk.partition_B(s_kl))  # (MMA, N, K, STAGES)
        t_bkh = mma_qk.make_fragment_B(thr_qk.partition_B(s_kh))
        t_bkr = mma_qk_rs.make_fragment_B(thr_qk_rs.partition_B(s_kr))
        t_sqr = thr_qk_rs.partition_A(s_qr)
        t_rq = mma_qk_rs.make_fragment_A(t_sqr)  # Q rope in registers (wgmma A layout)
        t_bvl = mma_pv_rs.make_fragment_B(thr_pv_rs.partition_B(s_vl))  # (MMA, N, K, STAGES)
        t_bvh = mma_pv_rs.make_fragment_B(thr_pv_rs.partition_B(s_vh))
        t_ap0 = mma_pv_ss.make_fragment_A(thr_pv_ss.partition_A(s_p0))
        t_ap1 = mma_pv_ss.make_fragment_A(thr_pv_ss.partition_A(s_p1))
        t_sp0 = thr_qk.partition_C(s_p0)
        t_sp1 = thr_qk.partition_C(s_p1)
        p_store = cute.make_copy_atom(cute.nvgpu.CopyUniversalOp(), dtype, num_bits_per_copy=32)
        if cutlass.const_expr(self.p_stmatrix):
            # cute_v20: the same P tiles stored by stmatrix, tiled over the score MMA's
            # accumulator layout, so each thread hands over the registers it holds
            p_stsm = cute.make_tiled_copy_C(
                cute.make_copy_atom(cute.nvgpu.warp.StMatrix8x8x16bOp(False, 4), dtype), mma_qk
            )
            thr_p_stsm = p_stsm.get_slice(wg_tidx)
            t_sp0 = thr_p_stsm.partition_D(s_p0)
            t_sp1 = thr_p_stsm.partition_D(s_p1)
            p_store = p_stsm

        acc_o = cute.make_rmem_tensor(thr_pv_rs.partition_shape_C((M_BLK, D_HALF)), cutlass.Float32)
        acc_o.fill(0.0)
        acc_s = cute.make_rmem_tensor(thr_qk.partition_shape_C((M_BLK, N_BLK)), cutlass.Float32)
        r_p = cute.make_rmem_tensor_like(acc_s, dtype)
        qk_ops = (mma_qk, mma_qk_rs, acc_s, t_aql, t_rq, t_bkl, t_bkh, t_bkr)
        # the score products, with each k step pinned or not (cute_v17; a trace-time choice)
        scores = functools.partial(_scores_sliced, pin=self.pin_mma_descriptors)
        t_cs = mn_view(thr_qk.partition_C(cute.make_identity_tensor((M_BLK, N_BLK))))
        n_rows = cute.size(t_cs, mode=[0])
        # running maximum (base-2 exponent units) and this warpgroup's partial row sums
        row_max = cute.make_rmem_tensor((n_rows,), cutlass.Float32)
        row_sum = cute.make_rmem_tensor((n_rows,), cutlass.Float32)
        row_max.fill(-cutlass.Float32.inf)
        row_sum.fill(0.0)
        if cutlass.const_expr(self.rescale_o_after_p0_ready):
            o_scale = cute.make_rmem_tensor((n_rows,), cutlass.Float32)  # m_a -> m_b, per row
        o_moved = None
        if cutlass.const_expr(self.max_move_threshold is not None):
            o_moved = cute.make_rmem_tensor((n_rows,), cutlass.Float32)  # m_b - m_a, per row
        if cutlass.const_expr(self.post_max_first):
            m_new = cute.make_rmem_tensor((n_rows,), cutlass.Float32)  # posted, not yet applied

        # ---- prologue: the slice barriers, Q (cp.async), tiles 0 and 1 (TMA)
        if tidx == 0:
            for s in cutlass.range_constexpr(STAGES * SLICES):
                cute.arch.mbarrier_init(s_full + s, 1)
        if wg_tidx == 0:  # one lane per warpgroup, no election: no TMA copy here
            cpasync.prefetch_descriptor(tma_kl)
            cpasync.prefetch_descriptor(tma_kr)
        cute.arch.mbarrier_init_fence()
        cute.arch.sync_threads()  # the barriers are initialised before anyone uses them
        if wg == 0:
            cute.copy(g2s, thr_g2s.partition_S(g_ql), thr_g2s.partition_D(s_ql))
            if warp_idx == PRODUCER_WARP[0]:  # noqa: SIM102 (nested: dynamic conditions)
                if n_steps > 0:  # tile 0 -> stage 0, in warpgroup 0's reading order
                    self.tma_slices(tma, s_full, tile_begin, 0, 0, True)
                    self.tma_slices(tma, s_full, tile_begin, 0, HALF_SLICES, False)
        else:
            cute.copy(g2s, thr_g2s.partition_S(g_qr), thr_g2s.partition_D(s_qr))
            if warp_idx == PRODUCER_WARP[1]:  # noqa: SIM102 (nested: dynamic conditions)
                if n_steps > 1:  # tile 1 -> stage 1, in warpgroup 1's reading order
                    self.tma_slices(tma, s_full, tile_begin + 1, 1, HALF_SLICES, True)
                    self.tma_slices(tma, s_full, tile_begin + 1, 1, 0, False)
        cute.arch.cp_async_commit_group()
        cute.arch.cp_async_wait_group(0)
        cute.arch.fence_view_async_shared()
        cute.arch.sync_threads()  # Q is in shared memory
        # Q's rope columns into registers; s_qr becomes P1, first written by warpgroup 1 after
        # MAX_A of the first pair, which both warpgroups reach only after this copy
        cute.autovec_copy(t_sqr, t_rq)

        acc_s_mn = mn_view(acc_s)
        acc_o_mn = mn_view(acc_o)

        if wg == 0:
            # ================= warpgroup 0: scores of the even tiles (stage 0), O[:, :256]
            if n_steps > 0:
                self.zero_if_partial(
                    s_full, 0, 0, seqlen - tile_begin * N_BLK, t_zl, t_zh, t_ckv, WG_LOCAL[0]
                )
                warpgroup.fence()
                scores(qk_ops, 0, 0, True, _slice_waiter(s_full, 0, 0))
                scores(qk_ops, 0, 1, False, _slice_waiter(s_full, 0, 0))
                warpgroup.commit_group()
                warpgroup.wait_group(0)
            for pair in range(n_pairs):
                phase = pair % 2  # this pair's fills of both stages
                next_phase = (pair + 1) % 2
                tile_a = tile_begin + 2 * pair
                has_b = tile_a + 1 < tile_end
                next_a = tile_a + 2 < tile_end
                next_b = tile_a + 3 < tile_end  # implies next_a
                # softmax of S_a against the running maximum; post m_a
                if cutlass.const_expr(self.post_max_first):
                    # cute_v19: post m_a and arrive first, then the rest of the softmax
                    self.softmax_max(
                        acc_s, row_max, m_new, t_cs, seqlen - tile_a * N_BLK, scale_log2,
                        s_max_a, s_max_a, lane, False,
                    )  # fmt: skip
                    cute.arch.barrier_arrive(barrier_id=MAX_A, number_of_threads=THREADS)
                    self.softmax_rest(acc_s, acc_o, row_max, row_sum, m_new, scale_log2)
                else:
                    self.softmax(
                        acc_s,
                        acc_o,
                        row_max,
                        row_sum,
                        t_cs,
                        seqlen - tile_a * N_BLK,
                        scale_log2,
                        s_max_a,
                        s_max_a,
                        lane,
                        False,
                    )
                    cute.arch.barrier_arrive(barrier_id=MAX_A, number_of_threads=THREADS)
                # O0 += P_a V_a[:, :256] with P_a (against m_a) from registers
                r_p.store(acc_s.load().to(dtype))
                warpgroup.fence()
                _pv(mma_pv_rs, acc_o, acc_as_wgmma_a(r_p), t_bvl, 0)
                warpgroup.commit_group()
                if cutlass.const_expr(not p0_early):
                    warpgroup.wait_group(0)
                    # stage 0's cols 0..255 and rope: last read by this warpgroup, just now
                    if next_a:
                        self.sync_before_refill(WG_LOCAL[0])
                        if warp_idx == PRODUCER_WARP[0]:
                            self.tma_slices(tma, s_full, tile_a + 2, 0, 0, True)
                # m_b from warpgroup 1: rescale P_a and O0 from m_a to m_b
                cute.arch.barrier(barrier_id=MAX_B, number_of_threads=THREADS)
                for r in cutlass.range_constexpr(n_rows):
                    m_b = s_max_b[t_cs[r, 0][0]]
                    c1 = cute.math.exp2(row_max[r] - m_b, fastmath=True)
                    acc_s_mn[r, None] = acc_s_mn[r, None].load() * c1
                    if cutlass.const_expr(self.rescale_o_after_p0_ready):
                        o_scale[r] = c1  # O0 is rescaled once P0 is posted (cute_v18)
                    else:
                        acc_o_mn[r, None] = acc_o_mn[r, None].load() * c1
                    if cutlass.const_expr(self.max_move_threshold is not None):
                        o_moved[r] = m_b - row_max[r]  # 0 where the maximum did not move
                    row_sum[r] = row_sum[r] * c1
                    row_max[r] = m_b
                # P0 is free: warpgroup 1's P0 V_a of the last pair completed before its MAX_B
                if cutlass.const_expr(p0_early):
                    # cute_v29: P_a V_a may still be reading r_p; P0 from registers of its own
                    r_p0 = cute.make_rmem_tensor_like(acc_s, dtype)
                    r_p0.store(acc_s.load().to(dtype))
                    cute.copy(p_store, self.p_source(r_p0, p_store, wg_tidx), t_sp0)
                else:
                    r_p.store(acc_s.load().to(dtype))
                    cute.copy(p_store, self.p_source(r_p, p_store, wg_tidx), t_sp0)
                cute.arch.fence_view_async_shared()
                cute.arch.barrier_arrive(barrier_id=P0_READY, number_of_threads=THREADS)
                if cutlass.const_expr(p0_early):
                    # P_a V_a completes here, after P0 is posted: then O0 is rescaled (below)
                    # and stage 0's cols 0..255 and rope, last read by it, are refilled
                    warpgroup.wait_group(0)
                    if next_a:
                        self.sync_before_refill(WG_LOCAL[0])
                        if warp_idx == PRODUCER_WARP[0]:
                            self.tma_slices(tma, s_full, tile_a + 2, 0, 0, True)
                if cutlass.const_expr(self.rescale_o_after_p0_ready):
                    # O0's last product (P_a V_a) completed (before MAX_B; cute_v29: just above);
                    # P_b V_b is issued below, so the rescale lands in between, off wg 1's path
                    self.rescale_o_after_p0(acc_o_mn, o_scale, o_moved)
                # O0 += P_b V_b[:, :256] with P_b from P1
                cute.arch.barrier(barrier_id=P1_READY, number_of_threads=THREADS)
                if has_b:
                    self.wait_remote_slices(s_full, 1, 0, phase)
                    warpgroup.fence()
                    _pv(mma_pv_ss, acc_o, t_ap1, t_bvl, 1)
                    warpgroup.commit_group()
                if next_a:  # (implies has_b)
                    # S_a+2 over the columns this warpgroup loaded (cols 0..255, rope), queued
                    # behind P1 V_b, each slice as soon as it has landed ...
                    self.zero_if_partial(
                        s_full,
                        0,
                        next_phase,
                        seqlen - (tile_a + 2) * N_BLK,
                        t_zl,
                        t_zh,
                        t_ckv,
                        WG_LOCAL[0],
                    )
                    warpgroup.fence()
                    scores(qk_ops, 0, 0, True, _slice_waiter(s_full, 0, next_phase))
                    warpgroup.commit_group()
                    # stage 1's cols 0..255 are read last by P1 V_b (the older wgmma group)
                    warpgroup.wait_group(1)
                    if next_b:
                        self.sync_before_refill(WG_LOCAL[0])
                        if warp_idx == PRODUCER_WARP[0]:
                            self.tma_slices(tma, s_full, tile_a + 3, 1, 0, False)
                    # ... then over cols 256..511, loaded by warpgroup 1
                    warpgroup.fence()
                    scores(qk_ops, 0, 1, False, _slice_waiter(s_full, 0, next_phase))
                    warpgroup.commit_group()
                warpgroup.wait_group(0)
        else:
            # ================= warpgroup 1: scores of the odd tiles (stage 1), O[:, 256:]
            if n_steps > 1:
                self.zero_if_partial(
                    s_full, 1, 0, seqlen - (tile_begin + 1) * N_BLK, t_zl, t_zh, t_ckv, WG_LOCAL[1]
                )
                warpgroup.fence()
                scores(qk_ops, 1, 1, True, _slice_waiter(s_full, 1, 0))
                scores(qk_ops, 1, 0, False, _slice_waiter(s_full, 1, 0))
                warpgroup.commit_group()
                warpgroup.wait_group(0)
            for pair in range(n_pairs):
                phase = pair % 2
                next_phase = (pair + 1) % 2
                tile_a = tile_begin + 2 * pair
                has_b = tile_a + 1 < tile_end
                next_a = tile_a + 2 < tile_end
                next_b = tile_a + 3 < tile_end
                # m_a from warpgroup 0; softmax of S_b against it (no tile b: all masked, so
                # m_b = m_a and P_b = 0); post m_b
                cute.arch.barrier(barrier_id=MAX_A, number_of_threads=THREADS)
                valid_b = seqlen - (tile_a + 1) * N_BLK
                if not has_b:
                    valid_b = 0
                if cutlass.const_expr(self.post_max_first):
                    # cute_v19: post m_b and arrive first, then the rest of the softmax
                    self.softmax_max(
                        acc_s, row_max, m_new, t_cs, valid_b, scale_log2, s_max_a, s_max_b,
                        lane, True,
                    )  # fmt: skip
                    cute.arch.barrier_arrive(barrier_id=MAX_B, number_of_threads=THREADS)
                    self.softmax_rest(acc_s, acc_o, row_max, row_sum, m_new, scale_log2)
                else:
                    self.softmax(
                        acc_s,
                        acc_o,
                        row_max,
                        row_sum,
                        t_cs,
                        valid_b,
                        scale_log2,
                        s_max_a,
                        s_max_b,
                        lane,
                        True,
                    )
                    cute.arch.barrier_arrive(barrier_id=MAX_B, number_of_threads=THREADS)
                # P_b to P1: warpgroup 0's P1 V_b of the last pair completed before its MAX_A
                r_p.store(acc_s.load().to(dtype))
                cute.copy(p_store, self.p_source(r_p, p_store, wg_tidx), t_sp1)
                cute.arch.fence_view_async_shared()
                if cutlass.const_expr(not self.p1_ready_after_own_pv):
                    cute.arch.barrier_arrive(barrier_id=P1_READY, number_of_threads=THREADS)
                # O1 += P_b V_b[:, 256:] (P_b from registers), then O1 += P0 V_a[:, 256:]
                if has_b:
                    warpgroup.fence()
                    _pv(mma_pv_rs, acc_o, acc_as_wgmma_a(r_p), t_bvh, 1)
                    warpgroup.commit_group()
                cute.arch.barrier(barrier_id=P0_READY, number_of_threads=THREADS)
                self.wait_remote_slices(s_full, 0, HALF_SLICES, phase)
                warpgroup.fence()
                _pv(mma_pv_ss, acc_o, t_ap0, t_bvh, 0)
                warpgroup.commit_group()
                if cutlass.const_expr(self.p1_ready_after_own_pv):
                    # cute_v14: P1 posted only once both of this warpgroup's P@V are issued
                    cute.arch.barrier_arrive(barrier_id=P1_READY, number_of_threads=THREADS)
                # stage 1's cols 256..511 and rope are read last by P_b V_b: refill once done
                warpgroup.wait_group(1)
                if next_b:
                    self.sync_before_refill(WG_LOCAL[1])
                    if warp_idx == PRODUCER_WARP[1]:
                        self.tma_slices(tma, s_full, tile_a + 3, 1, HALF_SLICES, True)
                # stage 0's cols 256..511 are read last by P0 V_a: refill once done
                warpgroup.wait_group(0)
                if next_a:
                    self.sync_before_refill(WG_LOCAL[1])
                    if warp_idx == PRODUCER_WARP[1]:
                        self.tma_slices(tma, s_full, tile_a + 2, 0, HALF_SLICES, False)
                if next_b:
                    # S_b+2 over the columns this warpgroup loaded (cols 256..511, rope), then
                    # over cols 0..255 (loaded by warpgroup 0), each slice once it has landed
                    self.zero_if_partial(
                        s_full,
                        1,
                        next_phase,
                        seqlen - (tile_a + 3) * N_BLK,
                        t_zl,
                        t_zh,
                        t_ckv,
                        WG_LOCAL[1],
                    )
                    warpgroup.fence()
                    scores(qk_ops, 1, 1, True, _slice_waiter(s_full, 1, next_phase))
                    scores(qk_ops, 1, 0, False, _slice_waiter(s_full, 1, next_phase))
                    warpgroup.commit_group()
                    warpgroup.wait_group(0)

        # ---- epilogue (v10's): add the two warpgroups' row sums (both against one maximum)
        for r in cutlass.range_constexpr(n_rows):
            total = quad_allreduce(row_sum[r], lambda a, b: a + b)
            if lane % 4 == 0:
                s_sum[wg, t_cs[r, 0][0]] = total
        cute.arch.sync_threads()
        lse = cute.make_rmem_tensor((n_rows,), cutlass.Float32)
        for r in cutlass.range_constexpr(n_rows):
            row = t_cs[r, 0][0]
            total = s_sum[0, row] + s_sum[1, row]
            empty = total == 0.0
            inv = 1.0 if empty else cute.arch.rcp_approx(total)
            acc_o_mn[r, None] = acc_o_mn[r, None].load() * inv
            # the maxima are already in base-2 exponent units
            lse[r] = (
                -cutlass.Float32.inf if empty else row_max[r] + cute.math.log2(total, fastmath=True)
            )

        self.store_and_merge(
            m_o,
            m_lse,
            m_out,
            m_sem,
            s_arrived,
            m_block,
            split,
            bi,
            acc_o,
            lse,
            thr_pv_rs,
            t_cs,
            s_ql,
        )

    @cute.jit
    def store_and_merge(
        self,
        m_o: cute.Tensor,
        m_lse: cute.Tensor,
        m_out: cute.Tensor,
        m_sem: cute.Tensor,
        s_arrived: cute.Tensor,
        m_block: Any,
        split: Any,
        bi: Any,
        acc_o: cute.Tensor,
        lse: cute.Tensor,
        thr_pv_rs: Any,
        t_cs: cute.Tensor,
        s_q: cute.Tensor,
    ) -> None:
        """The end of the kernel, after the rows are normalised: this warpgroup's O columns
        and warpgroup 0's LSEs to ``m_o`` / ``m_lse`` (the output itself at one split, bf16;
        fp32 partials otherwise), then, with partials, the in-kernel merge. Traced inline
        (cute_v26 overrides it); the PTX is the same as with the code written out. ``s_q``:
        the latent Q tile in shared memory, idle by now (every score wgmma has been waited on
        before the epilogue's CTA barrier); unused here, cute_v27 stages its output there."""
        tidx, _, _ = cute.arch.thread_idx()
        wg = tidx // WG_THREADS
        lane = cute.arch.lane_idx()
        n_rows = cute.size(t_cs, mode=[0])
        g_o = cute.local_tile(m_o[bi, split, None, None], (M_BLK, D_HALF), (m_block, wg))
        r_o = cute.make_rmem_tensor_like(acc_o, m_o.element_type)
        r_o.store(acc_o.load().to(m_o.element_type))
        cute.autovec_copy(r_o, thr_pv_rs.partition_C(g_o))

        if tidx < WG_THREADS and lane % 4 == 0:
            for r in cutlass.range_constexpr(n_rows):
                m_lse[bi, split, m_block * M_BLK + t_cs[r, 0][0]] = lse[r]

        if cutlass.const_expr(m_o.element_type == cutlass.Float32):  # split partials
            self.merge_if_last(m_o, m_lse, m_out, m_sem, s_arrived, m_block, bi)

    def posts_p0_before_own_pv_wait(self, out_type: type) -> bool:
        """Whether the kernel writing ``out_type`` posts P0 before waiting for its own P_a V_a
        (``p0_before_own_pv_wait``, ``p0_before_own_pv_wait_in_split``): a plain method, so the
        choice is made in Python while tracing."""
        split = out_type == cutlass.Float32  # fp32 partials: the split kernel
        return self.p0_before_own_pv_wait and (not split or self.p0_before_own_pv_wait_in_split)

    def rescale_o_after_p0(self, acc_o_mn: cute.Tensor, o_scale: cute.Tensor, o_moved: Any) -> None:
        """Warpgroup 0's O0 from m_a to m_b, once P0 is posted (``rescale_o_after_p0_ready``,
        cute_v18): each row by its factor. ``o_moved`` (``m_b - m_a`` per row, with
        ``max_move_threshold``) is unused here; cute_v32 skips the rescale when it is 0 for
        every row of the warp. Traced inline (a plain method)."""
        for r in range(cute.size(o_scale)):
            acc_o_mn[r, None] = acc_o_mn[r, None].load() * o_scale[r]

    def sync_before_refill(self, wg_barrier: int) -> None:
        """Before a warp refills a stage its warpgroup's products read last: the warpgroup's
        four warps meet (cute_v13 to v20), or not, the issuing warp's own wgmma wait being
        enough (``refill_without_wg_sync``, cute_v21)."""
        if cutlass.const_expr(not self.refill_without_wg_sync):
            cute.arch.barrier(barrier_id=wg_barrier, number_of_threads=WG_THREADS)

    def p_source(self, r_p: cute.Tensor, p_store: Any, wg_tidx: Any) -> cute.Tensor:
        """P's registers as the store reads them: as they are for the 32-bit stores, retiled
        to stmatrix's source layout (cute_v20)."""
        if cutlass.const_expr(self.p_stmatrix):
            return p_store.get_slice(wg_tidx).retile(r_p)
        return r_p

    def tma_slices(
        self,
        tma: tuple[Any, ...],
        s_full: cute.Pointer,
        tile: Any,
        stage: int,
        first: int,
        rope: bool,
    ) -> None:
        """Called by all 32 lanes of one warp (converged): the four latent slices ``first`` ..
        ``first + 3`` of KV tile ``tile`` into ``stage``, then (``rope``) its rope slice. For each
        slice the elected lane arms the slice's barrier for one box (64 x 64 x 2 bytes) and the
        warp issues that box's copy on it; rows >= t_max become 0. Traced inline (a plain
        method: every branch here is on Python values)."""
        tma_kl, tma_kr, t_gk, t_skl, t_skh, t_gkr, t_skr = tma[:7]
        hint = self.kv_hint(*tma[7:])
        slice_bytes = N_BLK * D_ROPE * (t_skl.element_type.width // 8)
        for j in range(first, first + HALF_SLICES):
            bar = s_full + (stage * SLICES + j)
            with cute.arch.elect_one():
                cute.arch.mbarrier_arrive_and_expect_tx(bar, slice_bytes)
            if j < HALF_SLICES:
                dst = t_skl[None, (0, j, stage)]
            else:
                dst = t_skh[None, (0, j - HALF_SLICES, stage)]
            cute.copy(tma_kl, t_gk[None, tile, j], dst, tma_bar_ptr=bar, **hint)
        if rope:
            bar = s_full + (stage * SLICES + LATENT_SLICES)
            with cute.arch.elect_one():
                cute.arch.mbarrier_arrive_and_expect_tx(bar, slice_bytes)
            cute.copy(tma_kr, t_gkr[None, tile], t_skr[None, stage], tma_bar_ptr=bar, **hint)

    def kv_hint(self, policy: Any = None) -> dict[str, Any]:
        """The extra keyword of a KV tile's TMA copy: none (cute_v13 to v22, whose copies
        carry CuTe DSL's default policy operand 0), or
        (``kv_evict_first``, cute_v23) ``cache_policy``, the 64-bit L2 policy operand of
        ``cp.async.bulk.tensor ... .L2::cache_hint``. CuTe DSL 4.3.5 takes it as an ``Int64``
        value (``CopyBulkTensorTileG2SNonExecTrait.unpack`` in
        ``cutlass/cute/nvgpu/cpasync/copy.py``); the value is CUTLASS's
        ``CacheHintSm90::EVICT_FIRST`` (``cute/arch/copy_sm90_desc.hpp``), the constant
        FlashMLA's KV copies pass (no ``createpolicy`` in the kernel). ``policy``
        (cute_v24): the launch's operand from :meth:`kv_policy_for_grid`, given to every
        copy."""
        if policy is not None:
            return {"cache_policy": policy}
        if self.kv_evict_first:
            # an Int64 holding an MLIR value: unpack reads ``.value`` as an SSA operand
            return {"cache_policy": cutlass.Int64(cutlass.Int64(L2_EVICT_FIRST).ir_value())}
        return {}

    def kv_policy_for_grid(self) -> Any:
        """cute_v24 (``kv_evict_first_max_row_blocks``): the KV copies' L2 policy operand for
        this launch, an ``Int64`` traced once at the kernel's start (LLVM recomputes it next to
        each copy): CUTLASS's
        ``CacheHintSm90::EVICT_FIRST`` when the grid has at most
        ``kv_evict_first_max_row_blocks`` row-block CTAs per (sequence, split)
        (``nctaid.x``: the grid is ``(rows / M_BLK, splits, batch)``), the CTAs that read the
        same KV tiles side by side; else 0, cute_v22's operand (CuTe DSL's default)."""
        row_blocks = cute.arch.grid_dim()[0]
        return cutlass.Int64(
            cutlass.select_(
                row_blocks <= self.kv_evict_first_max_row_blocks,
                cutlass.Int64(L2_EVICT_FIRST).ir_value(),
                cutlass.Int64(0).ir_value(),
            )
        )

    @cute.jit
    def softmax_max(
        self,
        acc_s: cute.Tensor,
        row_max: cute.Tensor,
        m_new: cute.Tensor,
        t_cs: cute.Tensor,
        valid: cutlass.Int32,
        scale_log2: cutlass.Float32,
        s_base: cute.Tensor,
        s_post: cute.Tensor,
        lane: cutlass.Int32,
        base_from_smem: cutlass.Constexpr,
    ):
        """The first half of cute_v10's ``softmax`` (cute_v19): mask the tile, take each row's
        new maximum into ``m_new`` and post it in ``s_post``; S, O, the running maximum and
        the row sums are left for :meth:`softmax_rest`, after the caller's arrival.
        cute_v10's ``softmax`` stays as it is rather than calling these two: one loop per
        row there, two loops here, and the measured versions' PTX must not change."""
        acc_s_mn = mn_view(acc_s)
        n_rows = cute.size(acc_s_mn, mode=[0])
        if valid < N_BLK:  # the sequence (or, valid <= 0, the pair) ends inside this tile
            for r in cutlass.range_constexpr(n_rows):
                for c in cutlass.range_constexpr(cute.size(t_cs, mode=[1])):
                    if t_cs[0, c][1] >= valid:
                        acc_s_mn[r, c] = -cutlass.Float32.inf
        for r in cutlass.range_constexpr(n_rows):
            row = t_cs[r, 0][0]
            cur = acc_s_mn[r, None].load().reduce(cute.ReductionOp.MAX, -cutlass.Float32.inf, 0)
            cur = quad_allreduce(cur, cute.arch.fmax) * scale_log2
            base = row_max[r]
            if cutlass.const_expr(base_from_smem):
                base = s_base[row]
            if cutlass.const_expr(self.max_move_threshold is None):
                m_new[r] = cute.arch.fmax(base, cur)
            else:  # cute_v32: the base stands unless the tile's maximum passes it by more
                # (a base of -inf moves to any finite maximum; an all -inf row never moves)
                m_new[r] = cur if cur > base + self.max_move_threshold else base
            if lane % 4 == 0:
                s_post[row] = m_new[r]

    @cute.jit
    def softmax_rest(
        self,
        acc_s: cute.Tensor,
        acc_o: cute.Tensor,
        row_max: cute.Tensor,
        row_sum: cute.Tensor,
        m_new: cute.Tensor,
        scale_log2: cutlass.Float32,
    ):
        """The second half (cute_v19): S becomes P = 2^(S scale - new maximum), and O and
        the row sums are rescaled from the previous maximum, as in cute_v10's ``softmax``."""
        acc_s_mn = mn_view(acc_s)
        acc_o_mn = mn_view(acc_o)
        for r in cutlass.range_constexpr(cute.size(acc_s_mn, mode=[0])):
            new_max = m_new[r]
            corr = cute.math.exp2(row_max[r] - new_max, fastmath=True)
            p_row = cute.math.exp2(acc_s_mn[r, None].load() * scale_log2 - new_max, fastmath=True)
            row_sum[r] = row_sum[r] * corr + p_row.reduce(
                cute.ReductionOp.ADD, cutlass.Float32.zero, 0
            )
            acc_o_mn[r, None] = acc_o_mn[r, None].load() * corr
            row_max[r] = new_max
            acc_s_mn[r, None] = p_row

    def wait_slices(self, s_full: cute.Pointer, stage: int, first: int, phase: Any) -> None:
        """Wait for the four latent slices ``first`` .. ``first + 3`` of ``stage`` at ``phase``
        (one warpgroup's half of V, before a P@V that reads it)."""
        for j in range(first, first + HALF_SLICES):
            cute.arch.mbarrier_wait(s_full + (stage * SLICES + j), phase)

    def wait_remote_slices(self, s_full: cute.Pointer, stage: int, first: int, phase: Any) -> None:
        """Before a P@V on the other warpgroup's tile, just after the named barrier that
        posted its P: :meth:`wait_slices` (cute_v13 to v21), or nothing
        (``remote_pv_waits_slices`` off, cute_v22). The scorer of that tile waited on all its
        slices at ``phase`` before its score product, and arrived at the barrier this
        warpgroup has just synced on only after that product; the barrier orders the bytes
        the scorer observed before this warpgroup's wgmmas, as in FlashMLA's
        ``wg1_subroutine`` (``sP0Ready`` then ``warpgroup_cooperative_pv_gemm_remoteP``)."""
        if cutlass.const_expr(self.remote_pv_waits_slices):
            self.wait_slices(s_full, stage, first, phase)

    @cute.jit
    def zero_if_partial(
        self,
        s_full: cute.Pointer,
        stage: cutlass.Constexpr,
        phase: cutlass.Int32,
        valid: cutlass.Int32,
        t_zl: cute.Tensor,
        t_zh: cute.Tensor,
        t_ckv: cute.Tensor,
        wg_barrier: cutlass.Constexpr,
    ):
        """The scorer of ``stage``, before its score product: if the sequence ends inside the
        tile (``valid`` < 64 rows), wait for all eight latent slices and write zeros over their
        rows >= ``valid`` (P = 0 there, but 0 * NaN is NaN), visible to the async proxy and to
        the whole warpgroup before any wgmma reads them."""
        if valid < N_BLK:
            for j in cutlass.range_constexpr(LATENT_SLICES):
                cute.arch.mbarrier_wait(s_full + (stage * SLICES + j), phase)
            for n in cutlass.range_constexpr(cute.size(t_zl.shape[1])):
                if t_ckv[0, n, 0][0] >= valid:
                    # swizzled shared tensors take no .fill(): store a zero register fragment
                    zero = cute.make_rmem_tensor(
                        t_zl[None, n, None, stage].shape, t_zl.element_type
                    )
                    zero.fill(0)
                    store = cute.make_copy_atom(
                        cute.nvgpu.CopyUniversalOp(), t_zl.element_type, num_bits_per_copy=128
                    )
                    cute.copy(store, zero, t_zl[None, n, None, stage])
                    cute.copy(store, zero, t_zh[None, n, None, stage])
            cute.arch.fence_view_async_shared()
            cute.arch.barrier(barrier_id=wg_barrier, number_of_threads=WG_THREADS)


_HOST = VersionHost(VERSION, _MlaDecodeV13(), M_BLK, N_BLK, merge_in_kernel=True, packed=True)
entry = _HOST.entry
example_args = _HOST.example_args
mla_decode = _HOST.mla_decode
