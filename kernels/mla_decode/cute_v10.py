"""CuTe DSL MLA decode, version 10: the seesaw schedule -- both warpgroups compute scores, for
alternate KV tiles, so one warpgroup's softmax runs while the other's matrix products run.

In cute_v7 warpgroup 0 computes every 64x64 score tile and its softmax while warpgroup 1 waits,
and the tensor cores wait during the softmax (the ncu profiles of cute_v7 in the kernel's devlog:
tensor pipe busy ~53% of the time at decode, ~62% speculative). Here the KV tiles of a CTA are taken in pairs (a, b) = (2i, 2i+1): tile a
lives in shared-memory stage 0 and is scored by warpgroup 0, tile b in stage 1 and is scored by
warpgroup 1. Each warpgroup still owns half of O's 512 columns (warpgroup g: [256 g, 256 g + 256))
and so multiplies *both* tiles' P by its half of V: its own P from registers (wgmma RS), the
other warpgroup's P from shared memory (wgmma SS).

Schedule of one pair (S_x = Q K_x^T, P_x its softmax numerator; "arrive"/"sync" are the
producer and consumer sides of a named barrier over all 256 threads)::

    warpgroup 0 (tile a, stage 0)              warpgroup 1 (tile b, stage 1)
    m_a = max(m, rowmax S_a); post m_a         (S_b in registers)
    O0 *= 2^(m - m_a); P_a = 2^(S_a - m_a)
    arrive MAX_A  -------------------------->  sync MAX_A; m_b = max(m_a, rowmax S_b); post m_b
    O0 += P_a V_a[:, :256]       (RS)          O1 *= 2^(m_prev - m_b); P_b = 2^(S_b - m_b)
    load tile a+2 cols 0..255 + rope           arrive MAX_B; P_b -> smem P1; arrive P1_READY
    sync MAX_B  <----------------------------  O1 += P_b V_b[:, 256:]       (RS)
    P_a *= 2^(m_a - m_b); P_a -> smem P0
    arrive P0_READY  ----------------------->  sync P0_READY
    O0 *= 2^(m_a - m_b)                        O1 += P0 V_a[:, 256:]        (SS)
    sync P1_READY                              (P_b V_b done) load tile b+2 cols 256..575
    O0 += P1 V_b[:, :256]        (SS)          (P0 V_a done)  load tile a+2 cols 256..511
    S_a+2 over cols 0..255 + rope (queued)     S_b+2 over cols 256..575 (its own loads)
    (P1 V_b done) load tile b+2 cols 0..255    arrive KV0_HI (a+2's cols 256..511 are in)
    arrive KV1_LO (b+2's cols 0..255 are in)   sync KV1_LO; S_b+2 over cols 0..255
    sync KV0_HI; S_a+2 over cols 256..511

**The shared row maximum.** Both warpgroups scale the same 64 rows, so they must agree on one
running maximum m. It is made visible in a fixed order inside each pair: warpgroup 0 folds
tile a into m first and posts m_a (in ``s_max_a``) before MAX_A; warpgroup 1 reads m_a after
MAX_A, folds tile b into it and posts m_b = max(m_a, rowmax S_b) (in ``s_max_b``) before MAX_B.
So m_b is the maximum over every tile up to b, and after MAX_B both warpgroups take it as their
m. P_b is computed against m_b directly; P_a was computed against m_a (so that warpgroup 0 can
start P_a V_a before warpgroup 1 has its maximum) and is rescaled by 2^(m_a - m_b) before it
goes to shared memory for warpgroup 1, and O0 (which then holds P_a V_a against m_a) is
rescaled by the same factor after its RS product completed. Warpgroup 1 scales O1 once per
pair, by 2^(m_prev - m_b) = the two warpgroup-0 and warpgroup-1 factors combined. The maxima
are kept multiplied by scale*log2(e) (base-2 exponent units). Each warpgroup keeps the row sum
of its own tiles' P; both sums are kept against the same m, and are added at the end.
Two separate posting slots (``s_max_a``, ``s_max_b``) mean no thread overwrites a value that
another thread of its warp may still be reading.

**Barriers.** Named barriers 1-6 are producer/consumer pairs (bar.arrive by 128 threads,
bar.sync by the other 128), each used once per pair by each side; 7 and 8 are the per
warpgroup barriers (128 threads) that make one warpgroup's cp.async copies visible to its own
threads. No producer can arrive twice before its consumer synced once: every barrier's next
arrival depends on a later barrier of the other side (the argument is spelled out per barrier
in the comments of :meth:`_MlaDecodeV10.kernel`). Stage reuse needs no barrier of its own: each
warpgroup loads the columns that it alone reads last -- its own half of V in both stages
(cols 0..255 for warpgroup 0, 256..511 for warpgroup 1) plus the rope columns of the tile it
scores -- and loads them as soon as its own wgmma reading them has completed. The only
cross-warpgroup load dependency is the score product, which reads the other half of the tile:
KV0_HI / KV1_LO carry that, and the score product is split so that the columns a warpgroup
loaded itself are multiplied first.

**Shared memory (227 KB at most).** Q 64 KB (latent) + 8 KB (rope), two KV stages of 72 KB,
and now two P tiles of 8 KB would be 232 KB: 5 KB too many. The rope columns of Q (64x64) are
copied once into registers by both warpgroups (16 registers per thread, the A operand of an RS
wgmma for the 4 rope k-steps of every score product), and their shared-memory buffer becomes
the second P tile (P1, warpgroup 1's). Total as in v7 (~225 KB). The KV stages are allocated
as two 256-column halves per stage, so that each half has its own K view and V^T view
(the same bytes, as in v2).

**Registers.** Per thread: O half 128 fp32, S 32 fp32 (kept in warpgroup 0 until P_a is
rescaled), P 16 (bf16 pairs), Q rope 16. ptxas (CUDA 13.0, sm_90a) fits it in 223 of 255
with no spills; the CPU test checks the PTX for local memory.

**Kept from v7:** split-KV fp32 partials with the in-kernel merge by the last CTA (inherited),
masking only the tile that reaches past the sequence end, zero-filled tail rows, cp.async loads.

**Prediction.** At the tensor cores' peak one 64-row tile costs ~2,180 cycles: ~1,150 for the
score product (K = 576) and ~1,030 for P@V (K = 64, N = 512). cute_v7 takes ~3,600 cycles per
tile in the speculative case and ~4,750 at decode (ncu, see the kernel's devlog); part of the
difference is the softmax (exp2, max and shuffles over 64x64 scores, plus the O rescale), during
which nothing else runs on the tensor cores. In the seesaw, warpgroup 1's softmax runs under
warpgroup 0's P_a V_a product and warpgroup 0's rescale and P store under warpgroup 1's P_b V_b,
and the next pair's score product starts on the columns a warpgroup loaded itself while the
other half still arrives. Expected: speculative 10-20% faster (tensor pipe busy 62% -> ~70-75%);
decode 5-10% faster (53% -> ~60%), less than speculative because a decode CTA has only 32 tiles
(16 pairs) and its fixed costs (Q and first loads, partial write, merge) do not shrink. What
could cancel it: with two stages the load of the next pair can start only when a stage half
is released, so a slow load is exposed once per pair instead of being hidden under a whole tile
as in v7 (where warpgroup 1 had nothing else to do); and the extra named barriers, the P
rescale in warpgroup 0 and the RS/SS mix add issue work on both warpgroups.
"""

import cuda.bindings.driver as cuda
import cutlass
import cutlass.cute as cute
import cutlass.utils
from cutlass.cute.nvgpu import warpgroup

from kernels.mla_decode import reference as ref
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
    quad_allreduce,
    wgmma_tiled,
)
from kernels.mla_decode.cute_v7 import _MlaDecodeV7

VERSION = "cute_v10"
DESCRIPTION = (
    "CuTe DSL: seesaw schedule -- both warpgroups score alternate KV tiles, so one "
    "warpgroup's softmax overlaps the other's matrix products (Q rope in registers, P x2)"
)

M_BLK = 64  # query rows per CTA = the wgmma M of one warpgroup
N_BLK = 64  # KV rows per tile
STAGES = 2  # stage 0: tiles scored by warpgroup 0 (even), stage 1: by warpgroup 1 (odd)
THREADS = 256
WG_THREADS = 128
D_LAT = ref.D_LATENT  # 512
D_HALF = D_LAT // 2  # O columns (and V columns) of one warpgroup
D_ROPE = ref.D_ROPE  # 64
K_HALF = D_HALF // 16  # k16 steps of the score product over one latent half

# Named barriers (0 is __syncthreads). Producer side arrives, consumer side syncs.
MAX_A = 1  # wg0 -> wg1: m_a is in s_max_a
MAX_B = 2  # wg1 -> wg0: m_b is in s_max_b
P0_READY = 3  # wg0 -> wg1: P_a (against m_b) is in smem P0
P1_READY = 4  # wg1 -> wg0: P_b is in smem P1
KV0_HI = 5  # wg1 -> wg0: tile a+2's cols 256..511 are in stage 0
KV1_LO = 6  # wg0 -> wg1: tile b+2's cols 0..255 are in stage 1
WG_LOCAL = (7, 8)  # per warpgroup: its own cp.async copies are visible to all its threads


def _scores(mma_qk, mma_qk_rs, acc_s, t_aql, t_rq, t_bkl, t_bkh, t_bkr, stage, halves, first):
    """Issue S (+)= Q K^T for the tile in ``stage`` over the latent ``halves`` (0: cols 0..255,
    1: cols 256..511; 16 k16 steps each, Q from shared memory), in that order; ``first`` (the
    product starts here) also zeroes S and adds the 4 rope k-steps (Q from registers).
    Unrolled at trace time; the caller fences, commits and waits."""
    qk = cute.make_mma_atom(mma_qk.op)
    qk.set(warpgroup.Field.ACCUMULATE, not first)
    for h in halves:
        t_bk = t_bkh if h else t_bkl
        for k in range(K_HALF):
            cute.gemm(
                qk, acc_s, t_aql[None, None, h * K_HALF + k], t_bk[None, None, k, stage], acc_s
            )
            qk.set(warpgroup.Field.ACCUMULATE, True)
    if first:
        qk_rs = cute.make_mma_atom(mma_qk_rs.op)
        qk_rs.set(warpgroup.Field.ACCUMULATE, True)
        for k in range(cute.size(t_rq, mode=[2])):
            cute.gemm(qk_rs, acc_s, t_rq[None, None, k], t_bkr[None, None, k, stage], acc_s)


def _pv(mma_pv, acc_o, t_a, t_bv, stage):
    """Issue O += P V_half over the tile's 4 k16 steps (A: registers or shared memory)."""
    pv = cute.make_mma_atom(mma_pv.op)
    pv.set(warpgroup.Field.ACCUMULATE, True)
    for k in range(cute.size(t_a, mode=[2])):
        cute.gemm(pv, acc_o, t_a[None, None, k], t_bv[None, None, k, stage], acc_o)


class _MlaDecodeV10(_MlaDecodeV7):
    """v7's entry signature, launch and in-kernel split merge; a seesaw attention kernel."""

    def __init__(self) -> None:  # no knobs (v7's L2 prefetch distance does not apply)
        pass

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
        # Q latent/rope and P as in v7; the KV stages as two 256-column halves (K and V^T views)
        s_ql_layout, s_qr_layout, _, s_kr_layout, _, s_p_layout = mla_smem_layouts(
            dtype, M_BLK, N_BLK, STAGES
        )
        k_atom = warpgroup.make_smem_layout_atom(warpgroup.SmemLayoutAtomKind.K_SW128, dtype)
        mn_atom = warpgroup.make_smem_layout_atom(warpgroup.SmemLayoutAtomKind.MN_SW128, dtype)
        s_kh_layout = cute.tile_to_shape(k_atom, (N_BLK, D_HALF, STAGES), (0, 1, 2))
        s_vh_layout = cute.tile_to_shape(mn_atom, (D_HALF, N_BLK, STAGES), (1, 0, 2))

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

        g2s = g2s_tiled_copy(dtype, WG_THREADS)  # one warpgroup loads
        k_major = warpgroup.OperandMajorMode.K
        mn_major = warpgroup.OperandMajorMode.MN
        ss = warpgroup.OperandSource.SMEM
        rs = warpgroup.OperandSource.RMEM

        # one warpgroup per MMA:
        mma_qk = wgmma_tiled(dtype, M_BLK, N_BLK, ss, k_major)  # S, latent columns: Q from smem
        mma_qk_rs = wgmma_tiled(dtype, M_BLK, N_BLK, rs, k_major)  # S, rope: Q from registers
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

        seqlen, tile_begin, tile_end, n_steps = kv_tile_range(
            m_lens, bi, split, tiles_per_split, N_BLK
        )
        n_pairs = (n_steps + 1) // 2

        q_b = m_q[bi, None, None]
        kv_b = m_kv[bi, None, None]
        g_ql = cute.local_tile(q_b, (M_BLK, D_LAT), (m_block, 0))
        g_qr = cute.local_tile(q_b, (M_BLK, D_ROPE), (m_block, D_LAT // D_ROPE))
        g_kl = cute.local_tile(kv_b, (N_BLK, D_HALF), (None, 0))  # cols 0..255 of every tile
        g_kh = cute.local_tile(kv_b, (N_BLK, D_HALF), (None, 1))  # cols 256..511
        g_kr = cute.local_tile(kv_b, (N_BLK, D_ROPE), (None, D_LAT // D_ROPE))

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

        # copies: each warpgroup partitions with its own 128 threads
        thr_g2s = g2s.get_slice(wg_tidx)
        t_gkl = thr_g2s.partition_S(g_kl)  # (CPY, n, k, tiles)
        t_skl = thr_g2s.partition_D(s_kl)  # (CPY, n, k, STAGES)
        t_gkh = thr_g2s.partition_S(g_kh)
        t_skh = thr_g2s.partition_D(s_kh)
        t_gkr = thr_g2s.partition_S(g_kr)
        t_skr = thr_g2s.partition_D(s_kr)
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

        acc_o = cute.make_rmem_tensor(thr_pv_rs.partition_shape_C((M_BLK, D_HALF)), cutlass.Float32)
        acc_o.fill(0.0)
        acc_s = cute.make_rmem_tensor(thr_qk.partition_shape_C((M_BLK, N_BLK)), cutlass.Float32)
        r_p = cute.make_rmem_tensor_like(acc_s, dtype)
        t_cs = mn_view(thr_qk.partition_C(cute.make_identity_tensor((M_BLK, N_BLK))))
        n_rows = cute.size(t_cs, mode=[0])
        # running maximum (base-2 exponent units) and this warpgroup's partial row sums
        row_max = cute.make_rmem_tensor((n_rows,), cutlass.Float32)
        row_sum = cute.make_rmem_tensor((n_rows,), cutlass.Float32)
        row_max.fill(-cutlass.Float32.inf)
        row_sum.fill(0.0)

        # ---- prologue: Q, and tiles 0 and 1, each column block by the warpgroup that owns it
        if wg == 0:
            cute.copy(g2s, thr_g2s.partition_S(g_ql), thr_g2s.partition_D(s_ql))
            for st in cutlass.range_constexpr(STAGES):
                if tile_begin + st < tile_end:
                    self.load_rows(g2s, t_gkl, t_skl, t_ckv, tile_begin + st, st, seqlen)
            if n_steps > 0:
                self.load_rows(g2s, t_gkr, t_skr, t_ckv, tile_begin, 0, seqlen)
        else:
            cute.copy(g2s, thr_g2s.partition_S(g_qr), thr_g2s.partition_D(s_qr))
            for st in cutlass.range_constexpr(STAGES):
                if tile_begin + st < tile_end:
                    self.load_rows(g2s, t_gkh, t_skh, t_ckv, tile_begin + st, st, seqlen)
            if n_steps > 1:
                self.load_rows(g2s, t_gkr, t_skr, t_ckv, tile_begin + 1, 1, seqlen)
        cute.arch.cp_async_commit_group()
        cute.arch.cp_async_wait_group(0)
        cute.arch.fence_view_async_shared()
        cute.arch.sync_threads()
        # Q's rope columns into registers; s_qr becomes P1, first written by warpgroup 1 after
        # MAX_A of the first pair, which both warpgroups reach only after this copy
        cute.autovec_copy(t_sqr, t_rq)

        acc_s_mn = mn_view(acc_s)
        acc_o_mn = mn_view(acc_o)

        if wg == 0:
            # ================= warpgroup 0: scores of the even tiles (stage 0), O[:, :256]
            if n_steps > 0:
                warpgroup.fence()
                _scores(mma_qk, mma_qk_rs, acc_s, t_aql, t_rq, t_bkl, t_bkh, t_bkr, 0, (0, 1), True)
                warpgroup.commit_group()
                warpgroup.wait_group(0)
            for pair in range(n_pairs):
                tile_a = tile_begin + 2 * pair
                has_b = tile_a + 1 < tile_end
                next_a = tile_a + 2 < tile_end
                next_b = tile_a + 3 < tile_end  # implies next_a
                # softmax of S_a against the running maximum; post m_a
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
                # next arrival at MAX_A (next pair) comes after this pair's MAX_B sync, which
                # warpgroup 1 arrives only after its MAX_A sync
                cute.arch.barrier_arrive(barrier_id=MAX_A, number_of_threads=THREADS)
                # O0 += P_a V_a[:, :256] with P_a (against m_a) from registers
                r_p.store(acc_s.load().to(dtype))
                warpgroup.fence()
                _pv(mma_pv_rs, acc_o, acc_as_wgmma_a(r_p), t_bvl, 0)
                warpgroup.commit_group()
                warpgroup.wait_group(0)
                # only this warpgroup reads stage 0's cols 0..255 and rope after S_a: reload
                if next_a:
                    self.load_rows(g2s, t_gkl, t_skl, t_ckv, tile_a + 2, 0, seqlen)
                    self.load_rows(g2s, t_gkr, t_skr, t_ckv, tile_a + 2, 0, seqlen)
                cute.arch.cp_async_commit_group()
                # m_b from warpgroup 1: rescale P_a and O0 from m_a to m_b
                cute.arch.barrier(barrier_id=MAX_B, number_of_threads=THREADS)
                for r in cutlass.range_constexpr(n_rows):
                    m_b = s_max_b[t_cs[r, 0][0]]
                    c1 = cute.math.exp2(row_max[r] - m_b, fastmath=True)
                    acc_s_mn[r, None] = acc_s_mn[r, None].load() * c1
                    acc_o_mn[r, None] = acc_o_mn[r, None].load() * c1
                    row_sum[r] = row_sum[r] * c1
                    row_max[r] = m_b
                # P0 is free: warpgroup 1's P0 V_a of the last pair completed before its MAX_B
                r_p.store(acc_s.load().to(dtype))
                cute.copy(p_store, r_p, t_sp0)
                cute.arch.fence_view_async_shared()
                # next arrival at P0_READY comes after this pair's KV0_HI sync (or, in the last
                # pair, never), which warpgroup 1 arrives only after its P0_READY sync
                cute.arch.barrier_arrive(barrier_id=P0_READY, number_of_threads=THREADS)
                # O0 += P_b V_b[:, :256] with P_b from P1
                cute.arch.barrier(barrier_id=P1_READY, number_of_threads=THREADS)
                if has_b:
                    warpgroup.fence()
                    _pv(mma_pv_ss, acc_o, t_ap1, t_bvl, 1)
                    warpgroup.commit_group()
                if next_a:  # (implies has_b)
                    # S_a+2 over the columns this warpgroup loaded (cols 0..255, rope), queued
                    # behind P1 V_b ...
                    cute.arch.cp_async_wait_group(0)
                    cute.arch.fence_view_async_shared()
                    cute.arch.barrier(barrier_id=WG_LOCAL[0], number_of_threads=WG_THREADS)
                    warpgroup.fence()
                    _scores(
                        mma_qk, mma_qk_rs, acc_s, t_aql, t_rq, t_bkl, t_bkh, t_bkr, 0, (0,), True
                    )
                    warpgroup.commit_group()
                    # stage 1's cols 0..255 are read last by P1 V_b: once it completed (the
                    # older of the two wgmma groups), load tile b+2's and tell warpgroup 1. The
                    # next arrival at KV1_LO comes after the next MAX_B sync, which warpgroup 1
                    # arrives only after this pair's KV1_LO sync
                    warpgroup.wait_group(1)
                    if next_b:
                        self.load_rows(g2s, t_gkl, t_skl, t_ckv, tile_a + 3, 1, seqlen)
                        cute.arch.cp_async_commit_group()
                        cute.arch.cp_async_wait_group(0)
                        cute.arch.fence_view_async_shared()
                        cute.arch.barrier_arrive(barrier_id=KV1_LO, number_of_threads=THREADS)
                    # ... then over cols 256..511, loaded by warpgroup 1
                    cute.arch.barrier(barrier_id=KV0_HI, number_of_threads=THREADS)
                    warpgroup.fence()  # the same accumulators, across a branch
                    _scores(
                        mma_qk, mma_qk_rs, acc_s, t_aql, t_rq, t_bkl, t_bkh, t_bkr, 0, (1,), False
                    )
                    warpgroup.commit_group()
                warpgroup.wait_group(0)
        else:
            # ================= warpgroup 1: scores of the odd tiles (stage 1), O[:, 256:]
            if n_steps > 1:
                warpgroup.fence()
                _scores(mma_qk, mma_qk_rs, acc_s, t_aql, t_rq, t_bkl, t_bkh, t_bkr, 1, (1, 0), True)
                warpgroup.commit_group()
                warpgroup.wait_group(0)
            for pair in range(n_pairs):
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
                # next arrival at MAX_B comes after the next MAX_A sync, which warpgroup 0
                # arrives only after this pair's MAX_B sync
                cute.arch.barrier_arrive(barrier_id=MAX_B, number_of_threads=THREADS)
                # P_b to P1: warpgroup 0's P1 V_b of the last pair completed before its MAX_A
                r_p.store(acc_s.load().to(dtype))
                cute.copy(p_store, r_p, t_sp1)
                cute.arch.fence_view_async_shared()
                # next arrival at P1_READY comes after the next MAX_A sync, which warpgroup 0
                # arrives only after this pair's P1_READY sync
                cute.arch.barrier_arrive(barrier_id=P1_READY, number_of_threads=THREADS)
                # O1 += P_b V_b[:, 256:] (P_b from registers), then O1 += P0 V_a[:, 256:]
                if has_b:
                    warpgroup.fence()
                    _pv(mma_pv_rs, acc_o, acc_as_wgmma_a(r_p), t_bvh, 1)
                    warpgroup.commit_group()
                cute.arch.barrier(barrier_id=P0_READY, number_of_threads=THREADS)
                warpgroup.fence()
                _pv(mma_pv_ss, acc_o, t_ap0, t_bvh, 0)
                warpgroup.commit_group()
                # stage 1's cols 256..511 and rope are read last by P_b V_b: reload once done
                warpgroup.wait_group(1)
                if next_b:
                    self.load_rows(g2s, t_gkh, t_skh, t_ckv, tile_a + 3, 1, seqlen)
                    self.load_rows(g2s, t_gkr, t_skr, t_ckv, tile_a + 3, 1, seqlen)
                cute.arch.cp_async_commit_group()
                # stage 0's cols 256..511 are read last by P0 V_a: reload once done
                warpgroup.wait_group(0)
                if next_a:
                    self.load_rows(g2s, t_gkh, t_skh, t_ckv, tile_a + 2, 0, seqlen)
                cute.arch.cp_async_commit_group()
                if next_b:
                    # S_b+2 over the columns this warpgroup loaded (cols 256..511, rope) ...
                    cute.arch.cp_async_wait_group(1)
                    cute.arch.fence_view_async_shared()
                    cute.arch.barrier(barrier_id=WG_LOCAL[1], number_of_threads=WG_THREADS)
                    warpgroup.fence()
                    _scores(
                        mma_qk, mma_qk_rs, acc_s, t_aql, t_rq, t_bkl, t_bkh, t_bkr, 1, (1,), True
                    )
                    warpgroup.commit_group()
                    # tile a+2's cols 256..511 are in: tell warpgroup 0. The next arrival at
                    # KV0_HI comes after the next P0_READY sync, which warpgroup 0 arrives only
                    # after this pair's KV0_HI sync
                    cute.arch.cp_async_wait_group(0)
                    cute.arch.fence_view_async_shared()
                    cute.arch.barrier_arrive(barrier_id=KV0_HI, number_of_threads=THREADS)
                    # ... then over cols 0..255, loaded by warpgroup 0
                    cute.arch.barrier(barrier_id=KV1_LO, number_of_threads=THREADS)
                    warpgroup.fence()  # the same accumulators, across a branch
                    _scores(
                        mma_qk, mma_qk_rs, acc_s, t_aql, t_rq, t_bkl, t_bkh, t_bkr, 1, (0,), False
                    )
                    warpgroup.commit_group()
                    warpgroup.wait_group(0)
                elif next_a:
                    cute.arch.cp_async_wait_group(0)
                    cute.arch.fence_view_async_shared()
                    cute.arch.barrier_arrive(barrier_id=KV0_HI, number_of_threads=THREADS)

        # ---- epilogue: add the two warpgroups' row sums (both against the same maximum)
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

        g_o = cute.local_tile(m_o[bi, split, None, None], (M_BLK, D_HALF), (m_block, wg))
        r_o = cute.make_rmem_tensor_like(acc_o, m_o.element_type)
        r_o.store(acc_o.load().to(m_o.element_type))
        cute.autovec_copy(r_o, thr_pv_rs.partition_C(g_o))

        if tidx < WG_THREADS and lane % 4 == 0:
            for r in cutlass.range_constexpr(n_rows):
                m_lse[bi, split, m_block * M_BLK + t_cs[r, 0][0]] = lse[r]

        if cutlass.const_expr(m_o.element_type == cutlass.Float32):  # split partials
            self.merge_if_last(m_o, m_lse, m_out, m_sem, s_arrived, m_block, bi)

    @cute.jit
    def load_rows(
        self,
        g2s: cute.TiledCopy,
        t_g: cute.Tensor,
        t_s: cute.Tensor,
        t_c: cute.Tensor,
        tile: cutlass.Int32,
        stage: cutlass.Constexpr,
        seqlen: cutlass.Int32,
    ):
        """cp.async one column block (``t_g``/``t_s``: a latent half or the rope columns) of KV
        tile ``tile`` into ``stage``, by the calling warpgroup; rows past the sequence's end
        are written as zeros (P = 0 times a NaN row would still poison O)."""
        valid = seqlen - tile * N_BLK
        for n in cutlass.range_constexpr(cute.size(t_s.shape[1])):
            if t_c[0, n, 0][0] < valid:
                cute.copy(g2s, t_g[None, n, None, tile], t_s[None, n, None, stage])
            else:
                zero = cute.make_rmem_tensor(t_s[None, n, None, stage].shape, t_s.element_type)
                zero.fill(0)
                store = cute.make_copy_atom(
                    cute.nvgpu.CopyUniversalOp(), t_s.element_type, num_bits_per_copy=128
                )
                cute.copy(store, zero, t_s[None, n, None, stage])

    @cute.jit
    def softmax(
        self,
        acc_s: cute.Tensor,
        acc_o: cute.Tensor,
        row_max: cute.Tensor,
        row_sum: cute.Tensor,
        t_cs: cute.Tensor,
        valid: cutlass.Int32,
        scale_log2: cutlass.Float32,
        s_base: cute.Tensor,
        s_post: cute.Tensor,
        lane: cutlass.Int32,
        base_from_smem: cutlass.Constexpr,
    ):
        """Online softmax of one score tile (``valid`` columns count; fewer than N_BLK: mask).

        New maximum = max(base, scaled row max of S), where base is this warpgroup's running
        maximum (warpgroup 0) or the one warpgroup 0 just posted in ``s_base`` (warpgroup 1,
        ``base_from_smem``). O and the row sums are rescaled from the warpgroup's previous
        maximum, S becomes P = 2^(S scale - max), and the new maximum is posted in ``s_post``
        by one lane of each quad (the row's owners)."""
        acc_s_mn = mn_view(acc_s)
        acc_o_mn = mn_view(acc_o)
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
            new_max = cute.arch.fmax(base, cur)
            corr = cute.math.exp2(row_max[r] - new_max, fastmath=True)
            p_row = cute.math.exp2(acc_s_mn[r, None].load() * scale_log2 - new_max, fastmath=True)
            # per-lane partial sums; the quad reduction happens once, after the loop
            row_sum[r] = row_sum[r] * corr + p_row.reduce(
                cute.ReductionOp.ADD, cutlass.Float32.zero, 0
            )
            acc_o_mn[r, None] = acc_o_mn[r, None].load() * corr
            row_max[r] = new_max
            acc_s_mn[r, None] = p_row
            if lane % 4 == 0:
                s_post[row] = new_max


_HOST = VersionHost(VERSION, _MlaDecodeV10(), M_BLK, N_BLK, merge_in_kernel=True, packed=True)
entry = _HOST.entry
example_args = _HOST.example_args
mla_decode = _HOST.mla_decode
