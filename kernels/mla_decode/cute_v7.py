"""CuTe DSL MLA decode, version 7: v6 with the loads moved off the score warpgroup and the
split merge done by the last split CTA of each row block.

Three changes to v6, each aimed at time that v6 spends outside the tensor cores:

- **Loads by warpgroup 1 only.** In v6 both warpgroups issue the cp.async copies of the next
  KV tile (18 per thread, each with its tail-row predicate) before warpgroup 0 can start the
  score product. Warpgroup 1 is idle while the scores and the softmax run, so here it issues
  all of them (36 per thread) in that window, and warpgroup 0 starts the product at once.
- **Masking only on the partial tile.** The column mask runs only when the tile reaches past
  the sequence's length (a uniform branch), not on every tile.
- **No merge kernel.** With split-KV, each CTA writes its fp32 partial and LSE, then counts
  itself in an int32 arrival counter for its (sequence, row block); the CTA that arrives last
  merges all splits of its 64 rows (the partials are still in L2) and resets the counter.
  v6's separate merge kernel took ~8 us of the ~99 us decode call on the H200
  (ncu, ``cute_20261202T140118Z``), most of it re-reading the partials from DRAM.
"""

from typing import Any

import cuda.bindings.driver as cuda
import cutlass
import cutlass.cute as cute
import cutlass.utils
import cutlass.utils.distributed as distributed
from cutlass._mlir.dialects import llvm
from cutlass.cute.nvgpu import warpgroup
from cutlass.cutlass_dsl import dsl_user_op

from kernels.mla_decode import reference as ref
from kernels.mla_decode.cute_common import (
    VersionHost,
    g2s_partitions,
    g2s_tiled_copy,
    kv_tile_range,
    mla_counters_tensor,
    mla_global_tensors,
    mla_out_tensor,
    mla_smem_layouts,
    mla_smem_tensors,
    mn_view,
    qk_scores,
    quad_allreduce,
    softmax_state,
    wgmma_smem_operands,
    wgmma_tiled,
)

# v2's block sizes and two-warpgroup thread layout
from kernels.mla_decode.cute_v2 import D_LAT, D_ROPE, M_BLK, N_BLK, STAGES, THREADS, WG_THREADS
from kernels.mla_decode.cute_v6 import _MlaDecodeV6

VERSION = "cute_v7"
DESCRIPTION = (
    "CuTe DSL: cute_v6 with KV loads issued by warpgroup 1 during the score product, masking "
    "only on the last tile, and the split merge done in-kernel by the last CTA to finish"
)

MERGE_COLS = ref.D_V // 32  # in-kernel merge: one warp per row, 16 fp32 columns per lane
N_WARPS = THREADS // 32


@dsl_user_op
def prefetch_l2_bulk(ptr: cute.Pointer, n_bytes: cutlass.Int32, *, loc=None, ip=None) -> None:
    """``cp.async.bulk.prefetch.L2.global``: bring ``n_bytes`` (a multiple of 16, 16-byte
    aligned start) from global memory into L2, without waiting and without a destination."""
    llvm.inline_asm(
        None,
        [
            ptr.toint(loc=loc, ip=ip).ir_value(loc=loc, ip=ip),
            cutlass.Int32(n_bytes).ir_value(loc=loc, ip=ip),
        ],
        "cp.async.bulk.prefetch.L2.global [$0], $1;",
        "l,r",
        has_side_effects=True,
        is_align_stack=False,
        asm_dialect=llvm.AsmDialect.AD_ATT,
    )


class _MlaDecodeV7(_MlaDecodeV6):
    """v6's attention kernel, changed as above. Inherited from v6: the KV loader (called by
    warpgroup 1 only), the P@V half of a step (:meth:`rescale_pv`) and the epilogue before the
    merge (:meth:`store_partial`).

    ``l2_prefetch_distance`` > 0 (cute_v8): warpgroup 1 also asks L2 for the KV tile that many
    steps ahead of the one being computed, with one bulk prefetch instruction per tile.

    A step's compute (:meth:`score_softmax`, :meth:`rescale_pv`) and the epilogue
    (:meth:`finish`) are methods so that cute_v11 reuses them around its TMA loads (and its
    entry, through :meth:`shared_storage` and :meth:`kv_load_args`); they are
    traced inline, so the PTX is the same as with the code written out in the kernel.
    """

    # cute_v16 (and cute_v17 on the seesaw): the score products' k steps index their operands
    # through pinned_index, so that their wgmma descriptors are formed in uniform registers
    pin_mma_descriptors = False

    def __init__(self, l2_prefetch_distance: int = 0) -> None:
        self.l2_prefetch_distance = l2_prefetch_distance

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
        (
            s_ql_layout,
            s_qr_layout,
            s_kl_layout,
            s_kr_layout,
            s_vt_layout,
            s_p_layout,
        ) = mla_smem_layouts(dtype, M_BLK, N_BLK, STAGES)

        SharedStorage = self.shared_storage(
            dtype, s_ql_layout, s_qr_layout, s_kl_layout, s_kr_layout, s_p_layout
        )
        kv_load_args = self.kv_load_args(p_kv, batch, t_max, s_kl_layout, s_kr_layout)
        g2s = g2s_tiled_copy(dtype, WG_THREADS)  # warpgroup 1 loads
        mma_qk = self.score_mma(dtype)  # v6's: the whole score tile in warpgroup 0
        mma_pv = wgmma_tiled(
            dtype,
            M_BLK,
            D_LAT // 2,
            warpgroup.OperandSource.SMEM,
            warpgroup.OperandMajorMode.MN,
            atoms_n=2,
        )

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
            s_kl_layout,
            s_kr_layout,
            s_vt_layout,
            s_p_layout,
            g2s,
            mma_qk,
            mma_pv,
            SharedStorage,
        ).launch(
            grid=(rows // M_BLK, splits, batch),
            block=[THREADS, 1, 1],
            smem=SharedStorage.size_in_bytes(),
            stream=stream,
        )

    def shared_storage(
        self,
        dtype: Any,
        s_ql_layout: Any,
        s_qr_layout: Any,
        s_kl_layout: Any,
        s_kr_layout: Any,
        s_p_layout: Any,
    ) -> Any:
        """v6's shared memory plus the arrival flag of the in-kernel merge (traced from the
        entry; cute_v11 adds its mbarriers)."""

        @cute.struct
        class SharedStorage:
            s_ql: cute.struct.Align[cute.struct.MemRange[dtype, cute.cosize(s_ql_layout)], 1024]
            s_qr: cute.struct.Align[cute.struct.MemRange[dtype, cute.cosize(s_qr_layout)], 1024]
            s_kl: cute.struct.Align[cute.struct.MemRange[dtype, cute.cosize(s_kl_layout)], 1024]
            s_kr: cute.struct.Align[cute.struct.MemRange[dtype, cute.cosize(s_kr_layout)], 1024]
            s_p: cute.struct.Align[cute.struct.MemRange[dtype, cute.cosize(s_p_layout)], 1024]
            # per row: this tile's O correction factor, then (after the loop) the row sum
            s_corr: cute.struct.Align[cute.struct.MemRange[cutlass.Float32, M_BLK], 16]
            s_sum: cute.struct.Align[cute.struct.MemRange[cutlass.Float32, M_BLK], 16]
            s_arrived: cute.struct.Align[cute.struct.MemRange[cutlass.Int32, 4], 16]

        return SharedStorage

    def kv_load_args(
        self, p_kv: cute.Pointer, batch: Any, t_max: Any, s_kl_layout: Any, s_kr_layout: Any
    ) -> tuple[Any, ...]:
        """Kernel arguments for the KV loads, passed after ``m_sem``: none for cp.async
        (traced from the entry; cute_v11 passes its TMA atoms and tensor maps)."""
        return ()

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
        s_kl_layout: cute.ComposedLayout,
        s_kr_layout: cute.ComposedLayout,
        s_vt_layout: cute.ComposedLayout,
        s_p_layout: cute.ComposedLayout,
        g2s: cute.TiledCopy,
        mma_qk: cute.TiledMma,
        mma_pv: cute.TiledMma,
        SharedStorage: cutlass.Constexpr,
    ):
        tidx, _, _ = cute.arch.thread_idx()
        m_block, split, bi = cute.arch.block_idx()
        dtype = m_q.element_type
        wg = tidx // WG_THREADS
        # the score MMA spans warpgroup 0 only; warpgroup 1 uses the same slice for row indices
        # (a wgmma accumulator's rows depend on the thread's place in its warpgroup, not on N)
        wg_tidx = tidx % WG_THREADS

        seqlen, tile_begin, tile_end, n_steps = kv_tile_range(
            m_lens, bi, split, tiles_per_split, N_BLK
        )

        q_b = m_q[bi, None, None]
        kv_b = m_kv[bi, None, None]
        g_ql = cute.local_tile(q_b, (M_BLK, D_LAT), (m_block, 0))
        g_qr = cute.local_tile(q_b, (M_BLK, D_ROPE), (m_block, D_LAT // D_ROPE))
        g_kl = cute.local_tile(kv_b, (N_BLK, D_LAT), (None, 0))
        g_kr = cute.local_tile(kv_b, (N_BLK, D_ROPE), (None, D_LAT // D_ROPE))

        smem = cutlass.utils.SmemAllocator()
        storage = smem.allocate(SharedStorage)
        s_ql, s_qr, s_kl, s_kr, s_vt = mla_smem_tensors(
            storage, s_ql_layout, s_qr_layout, s_kl_layout, s_kr_layout, s_vt_layout
        )
        s_p = storage.s_p.get_tensor(s_p_layout.outer, swizzle=s_p_layout.inner)
        s_corr = storage.s_corr.get_tensor(cute.make_layout((M_BLK,)))
        s_sum = storage.s_sum.get_tensor(cute.make_layout((M_BLK,)))
        s_arrived = storage.s_arrived.get_tensor(cute.make_layout((4,)))

        thr_g2s = g2s.get_slice(wg_tidx)  # used by warpgroup 1 only
        t_gql, t_sql, t_gqr, t_sqr, t_gkl, t_skl, t_gkr, t_skr, t_ckv = g2s_partitions(
            thr_g2s, N_BLK, g_ql, s_ql, g_qr, s_qr, g_kl, s_kl, g_kr, s_kr
        )

        thr_qk = mma_qk.get_slice(wg_tidx)
        thr_pv = mma_pv.get_slice(tidx)
        t_aql, t_aqr, t_bkl, t_bkr, t_bv = wgmma_smem_operands(
            mma_qk, thr_qk, mma_pv, thr_pv, s_ql, s_qr, s_kl, s_kr, s_vt
        )
        t_ap = mma_pv.make_fragment_A(thr_pv.partition_A(s_p))  # (MMA, M, K)
        t_sp = thr_qk.partition_C(s_p)
        p_store = cute.make_copy_atom(cute.nvgpu.CopyUniversalOp(), dtype, num_bits_per_copy=32)
        acc_o = cute.make_rmem_tensor(thr_pv.partition_shape_C((M_BLK, D_LAT)), cutlass.Float32)
        acc_o.fill(0.0)
        acc_o_mn = mn_view(acc_o)
        t_cs = mn_view(thr_qk.partition_C(cute.make_identity_tensor((M_BLK, N_BLK))))
        lane = cute.arch.lane_idx()

        if wg == 1:
            cute.copy(g2s, t_gql, t_sql)
            cute.copy(g2s, t_gqr, t_sqr)
            if n_steps > 0:
                self.load_kv(g2s, t_gkl, t_skl, t_gkr, t_skr, t_ckv, tile_begin, 0, seqlen)
            if cutlass.const_expr(self.l2_prefetch_distance > 0):
                for ahead in cutlass.range_constexpr(1, self.l2_prefetch_distance):
                    self.prefetch_tile(kv_b, tile_begin + ahead, tile_end, seqlen, wg_tidx)
        cute.arch.cp_async_commit_group()

        # running max and sum: kept by warpgroup 0 only (it sees whole score rows)
        _, row_max, row_sum = softmax_state(acc_o_mn)

        for step in range(n_steps):
            tile = tile_begin + step
            stage = step % STAGES
            cute.arch.cp_async_wait_group(0)  # warpgroup 1's copies (warpgroup 0 has none)
            cute.arch.fence_view_async_shared()
            # tile `step` is in shared memory for everyone, and both warpgroups are done with
            # step - 1 (its P and the stage the next load overwrites)
            cute.arch.sync_threads()
            if wg == 1:
                if step + 1 < n_steps:
                    self.load_kv(
                        g2s,
                        t_gkl,
                        t_skl,
                        t_gkr,
                        t_skr,
                        t_ckv,
                        tile + 1,
                        (step + 1) % STAGES,
                        seqlen,
                    )
                if cutlass.const_expr(self.l2_prefetch_distance > 0):
                    self.prefetch_tile(
                        kv_b, tile + self.l2_prefetch_distance, tile_end, seqlen, wg_tidx
                    )
            cute.arch.cp_async_commit_group()

            if wg == 0:
                self.score_softmax(
                    mma_qk,
                    thr_qk,
                    t_aql,
                    t_aqr,
                    t_bkl,
                    t_bkr,
                    t_sp,
                    p_store,
                    t_cs,
                    acc_o_mn,
                    row_max,
                    row_sum,
                    s_corr,
                    stage,
                    seqlen,
                    tile,
                    scale_log2,
                    lane,
                )
            self.rescale_pv(mma_pv, t_ap, t_bv, t_cs, acc_o, acc_o_mn, s_corr, stage, wg)

        self.finish(
            m_o, m_lse, m_out, m_sem, s_sum, s_arrived, thr_pv, t_cs, acc_o, acc_o_mn,
            row_max, row_sum, scale_log2, m_block, split, bi, tidx, wg, lane,
        )  # fmt: skip

    @cute.jit
    def score_softmax(
        self,
        mma_qk: cute.TiledMma,
        thr_qk: Any,
        t_aql: cute.Tensor,
        t_aqr: cute.Tensor,
        t_bkl: cute.Tensor,
        t_bkr: cute.Tensor,
        t_sp: cute.Tensor,
        p_store: cute.CopyAtom,
        t_cs: cute.Tensor,
        acc_o_mn: cute.Tensor,
        row_max: cute.Tensor,
        row_sum: cute.Tensor,
        s_corr: cute.Tensor,
        stage: cutlass.Int32,
        seqlen: cutlass.Int32,
        tile: cutlass.Int32,
        scale_log2: cutlass.Float32,
        lane: cutlass.Int32,
        slice_ready: Any = None,
    ):
        """Warpgroup 0: S = Q K^T of KV tile ``tile`` (in ``stage``; rows past ``seqlen``
        masked), the online softmax, P into shared memory and the row corrections posted.

        ``slice_ready`` (cute_v12): a Python callable, ``slice_ready(j)`` is traced just before
        the first wgmma that reads the stage's 64-column slice ``j`` (0-7: latent, 8: rope), so
        that it can wait for that slice alone. None (v7-v11): the whole tile is already in
        shared memory, and nothing is traced in between."""
        dtype = t_sp.element_type
        n_rows = cute.size(acc_o_mn, mode=[0])
        # S = Q K^T: 32 latent + 4 rope k16 steps, m64n64k16 from shared memory
        acc_s = qk_scores(
            mma_qk, thr_qk, t_aql, t_aqr, t_bkl, t_bkr, stage, M_BLK, N_BLK, slice_ready,
            self.pin_mma_descriptors,
        )  # fmt: skip

        valid = seqlen - tile * N_BLK
        acc_s_mn = mn_view(acc_s)
        if valid < N_BLK:  # the sequence ends inside this tile
            for r in cutlass.range_constexpr(n_rows):
                for c in cutlass.range_constexpr(cute.size(t_cs, mode=[1])):
                    if t_cs[0, c][1] >= valid:
                        acc_s_mn[r, c] = -cutlass.Float32.inf
        for r in cutlass.range_constexpr(n_rows):
            cur = acc_s_mn[r, None].load().reduce(cute.ReductionOp.MAX, -cutlass.Float32.inf, 0)
            new_max = cute.arch.fmax(row_max[r], quad_allreduce(cur, cute.arch.fmax))
            p_row = cute.math.exp2(
                acc_s_mn[r, None].load() * scale_log2 - new_max * scale_log2,
                fastmath=True,
            )
            corr = cute.math.exp2(row_max[r] * scale_log2 - new_max * scale_log2, fastmath=True)
            # per-lane partial sums; the quad reduction happens once, after the loop
            row_sum[r] = row_sum[r] * corr + p_row.reduce(
                cute.ReductionOp.ADD, cutlass.Float32.zero, 0
            )
            acc_o_mn[r, None] = acc_o_mn[r, None].load() * corr
            row_max[r] = new_max
            acc_s_mn[r, None] = p_row
            if lane % 4 == 0:
                s_corr[t_cs[r, 0][0]] = corr

        r_p = cute.make_rmem_tensor_like(acc_s, dtype)
        r_p.store(acc_s.load().to(dtype))
        cute.copy(p_store, r_p, t_sp)
        cute.arch.fence_view_async_shared()

    @cute.jit
    def finish(
        self,
        m_o: cute.Tensor,
        m_lse: cute.Tensor,
        m_out: cute.Tensor,
        m_sem: cute.Tensor,
        s_sum: cute.Tensor,
        s_arrived: cute.Tensor,
        thr_pv: Any,
        t_cs: cute.Tensor,
        acc_o: cute.Tensor,
        acc_o_mn: cute.Tensor,
        row_max: cute.Tensor,
        row_sum: cute.Tensor,
        scale_log2: cutlass.Float32,
        m_block: cutlass.Int32,
        split: cutlass.Int32,
        bi: cutlass.Int32,
        tidx: cutlass.Int32,
        wg: cutlass.Int32,
        lane: cutlass.Int32,
    ):
        """After the loop: v6's epilogue (:meth:`store_partial`), then the split merge by the
        last CTA of the row block."""
        self.store_partial(
            m_o, m_lse, s_sum, thr_pv, t_cs, acc_o, acc_o_mn, row_max, row_sum, scale_log2,
            m_block, split, bi, tidx, wg, lane,
        )  # fmt: skip
        if cutlass.const_expr(m_o.element_type == cutlass.Float32):  # split partials
            self.merge_if_last(m_o, m_lse, m_out, m_sem, s_arrived, m_block, bi)

    @cute.jit
    def prefetch_tile(
        self,
        kv_b: cute.Tensor,
        tile: cutlass.Int32,
        tile_end: cutlass.Int32,
        seqlen: cutlass.Int32,
        wg_tidx: cutlass.Int32,
    ):
        """One thread asks L2 for KV tile ``tile`` (contiguous rows) if this CTA will use it."""
        if wg_tidx == 0:  # noqa: SIM102 (nested: dynamic conditions)
            if tile < tile_end:
                n_rows = cutlass.min(N_BLK, seqlen - tile * N_BLK)
                start = cute.local_tile(kv_b, (N_BLK, ref.D_QK), (tile, 0)).iterator
                prefetch_l2_bulk(start, n_rows * (ref.D_QK * 2))

    @cute.jit
    def merge_if_last(
        self,
        m_o: cute.Tensor,
        m_lse: cute.Tensor,
        m_out: cute.Tensor,
        m_sem: cute.Tensor,
        s_arrived: cute.Tensor,
        m_block: cutlass.Int32,
        bi: cutlass.Int32,
    ):
        """The last split CTA of (sequence ``bi``, row block ``m_block``) merges its rows.

        Release/acquire as in CUTLASS's split-K semaphore: every thread's partial stores, a CTA
        barrier, then one thread's gpu-scope fence and atomic add; the last arriver fences again
        before the CTA reads the other splits' partials.
        """
        tidx, _, _ = cute.arch.thread_idx()
        splits = m_lse.shape[1]
        cute.arch.sync_threads()
        if tidx == 0:
            cute.arch.fence_acq_rel_gpu()
            counter = m_sem.iterator + (bi * m_sem.shape[1] + m_block)
            s_arrived[0] = distributed.atomicAdd(counter, cutlass.Int32(1))
            cute.arch.fence_acq_rel_gpu()
        cute.arch.sync_threads()
        if s_arrived[0] == splits - 1:
            cute.arch.fence_acq_rel_gpu()
            warp = tidx // 32
            lane = cute.arch.lane_idx()
            acc = cute.make_rmem_tensor((MERGE_COLS,), cutlass.Float32)
            part = cute.make_rmem_tensor((MERGE_COLS,), cutlass.Float32)
            res = cute.make_rmem_tensor((MERGE_COLS,), m_out.element_type)
            for i in cutlass.range_constexpr(M_BLK // N_WARPS):
                row = m_block * M_BLK + i * N_WARPS + warp
                top = -cutlass.Float32.inf
                for sp in range(splits):
                    top = cute.arch.fmax(top, m_lse[bi, sp, row])
                acc.fill(0.0)
                den = cutlass.Float32(0.0)
                for sp in range(splits):
                    w = cute.math.exp2(m_lse[bi, sp, row] - top, fastmath=True)
                    den = den + w
                    cute.autovec_copy(
                        cute.local_tile(m_o[bi, sp, row, None], (MERGE_COLS,), (lane,)), part
                    )
                    acc.store(acc.load() + part.load() * w)
                res.store((acc.load() * cute.arch.rcp_approx(den)).to(m_out.element_type))
                cute.autovec_copy(
                    res, cute.local_tile(m_out[bi, row, None], (MERGE_COLS,), (lane,))
                )
            if tidx == 0:
                m_sem[bi, m_block] = 0  # ready for the next call


_HOST = VersionHost(VERSION, _MlaDecodeV7(), M_BLK, N_BLK, merge_in_kernel=True, packed=True)
entry = _HOST.entry
example_args = _HOST.example_args
mla_decode = _HOST.mla_decode
