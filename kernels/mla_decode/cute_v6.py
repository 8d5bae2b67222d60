"""CuTe DSL MLA decode, version 6: warpgroup roles -- one warpgroup owns the scores.

In v3-v5 both warpgroups compute half of every 64x64 score tile (wgmma m64n32k16). Each of them
reads the whole Q tile (A operand) from shared memory for its half, so the score product moves
1.5x the shared-memory bytes of one m64n64k16 product, and the two halves of a row's maximum and
sum have to be exchanged through shared memory behind an extra CTA barrier every tile.

Here warpgroup 0 computes the full score tile (m64n64k16, Q read once per tile), runs the whole
online softmax in registers (row max and sum over a quad of lanes, no exchange), and publishes P
(bf16) and the per-row correction factor in shared memory. Warpgroup 1 waits on a named barrier
for them, rescales its half of O, and both warpgroups run their P@V halves (m64n256k16) together.
The same layout FlashMLA uses on Hopper (one warpgroup for the scores, the two warpgroups split
the 512 output columns). The KV pipeline (two cp.async stages), the zero-filled tail rows and the
split merge (second kernel of the same compiled call) are v4's.
"""

from typing import Any

import cutlass
import cutlass.cute as cute
import cutlass.utils
from cutlass.cute.nvgpu import warpgroup

from kernels.mla_decode import reference as ref
from kernels.mla_decode.cute_common import (
    VersionHost,
    cta_gmem_tiles,
    g2s_partitions,
    kv_tile_range,
    mla_smem_tensors,
    mn_view,
    qk_scores,
    quad_allreduce,
    softmax_state,
    wgmma_smem_operands,
    wgmma_tiled,
)

# v2's block sizes and two-warpgroup thread layout
from kernels.mla_decode.cute_v2 import D_LAT, M_BLK, N_BLK, STAGES, THREADS, WG_THREADS
from kernels.mla_decode.cute_v4 import _MlaDecodeV4

VERSION = "cute_v6"
DESCRIPTION = (
    "CuTe DSL: warpgroup 0 computes each full score tile and the softmax, warpgroup 1 "
    "only joins for P@V (named barrier), FlashMLA's split of roles"
)

P_READY_BARRIER = 1  # named barrier id (0 is __syncthreads): P and the corrections are in smem


class _MlaDecodeV6(_MlaDecodeV4):
    """v4's entry (attention, then the merge kernel when the KV is split), merge kernel and KV
    loader, and v3's launch of the attention kernel with v6's :meth:`shared_storage` and
    :meth:`score_mma`; a new attention kernel. The P@V half of
    a step (:meth:`rescale_pv`) and the epilogue (:meth:`store_partial`) are methods that
    cute_v7 inherits; they are traced inline (same PTX as the code written out in the kernel)."""

    def shared_storage(
        self,
        dtype: Any,
        s_ql_layout: Any,
        s_qr_layout: Any,
        s_kl_layout: Any,
        s_kr_layout: Any,
        s_p_layout: Any,
    ) -> Any:
        """The kernel's shared memory: v3's with one correction factor per row instead of
        v3's per-warpgroup row maxima."""

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

        return SharedStorage

    def score_mma(self, dtype: Any) -> Any:
        """The whole 64x64 score tile in one warpgroup: Q (A) is read once per K step."""
        return wgmma_tiled(
            dtype, M_BLK, N_BLK, warpgroup.OperandSource.SMEM, warpgroup.OperandMajorMode.K
        )

    @cute.kernel
    def kernel(
        self,
        m_q: cute.Tensor,
        m_kv: cute.Tensor,
        m_lens: cute.Tensor,
        m_o: cute.Tensor,
        m_lse: cute.Tensor,
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

        seqlen, tile_begin, _, n_steps = kv_tile_range(m_lens, bi, split, tiles_per_split, N_BLK)

        g_ql, g_qr, g_kl, g_kr = cta_gmem_tiles(m_q, m_kv, bi, m_block, M_BLK, N_BLK)

        smem = cutlass.utils.SmemAllocator()
        storage = smem.allocate(SharedStorage)
        s_ql, s_qr, s_kl, s_kr, s_vt = mla_smem_tensors(
            storage, s_ql_layout, s_qr_layout, s_kl_layout, s_kr_layout, s_vt_layout
        )
        s_p = storage.s_p.get_tensor(s_p_layout.outer, swizzle=s_p_layout.inner)
        s_corr = storage.s_corr.get_tensor(cute.make_layout((M_BLK,)))
        s_sum = storage.s_sum.get_tensor(cute.make_layout((M_BLK,)))

        thr_g2s = g2s.get_slice(tidx)
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

        cute.copy(g2s, t_gql, t_sql)
        cute.copy(g2s, t_gqr, t_sqr)
        if n_steps > 0:
            self.load_kv(g2s, t_gkl, t_skl, t_gkr, t_skr, t_ckv, tile_begin, 0, seqlen)
        cute.arch.cp_async_commit_group()

        # running max and sum: kept by warpgroup 0 only (it sees whole score rows)
        n_rows, row_max, row_sum = softmax_state(acc_o_mn)

        for step in range(n_steps):
            tile = tile_begin + step
            stage = step % STAGES
            self.next_kv_tile(g2s, t_gkl, t_skl, t_gkr, t_skr, t_ckv, step, n_steps, tile, seqlen)

            if wg == 0:
                # S = Q K^T: 32 latent + 4 rope k16 steps, m64n64k16 from shared memory
                acc_s = qk_scores(mma_qk, thr_qk, t_aql, t_aqr, t_bkl, t_bkr, stage, M_BLK, N_BLK)

                valid = seqlen - tile * N_BLK
                acc_s_mn = mn_view(acc_s)
                for r in cutlass.range_constexpr(n_rows):
                    for c in cutlass.range_constexpr(cute.size(t_cs, mode=[1])):
                        if t_cs[0, c][1] >= valid:
                            acc_s_mn[r, c] = -cutlass.Float32.inf
                    cur = (
                        acc_s_mn[r, None]
                        .load()
                        .reduce(cute.ReductionOp.MAX, -cutlass.Float32.inf, 0)
                    )
                    new_max = cute.arch.fmax(row_max[r], quad_allreduce(cur, cute.arch.fmax))
                    p_row = cute.math.exp2(
                        acc_s_mn[r, None].load() * scale_log2 - new_max * scale_log2,
                        fastmath=True,
                    )
                    corr = cute.math.exp2(
                        row_max[r] * scale_log2 - new_max * scale_log2, fastmath=True
                    )
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
            self.rescale_pv(mma_pv, t_ap, t_bv, t_cs, acc_o, acc_o_mn, s_corr, stage, wg)

        self.store_partial(
            m_o, m_lse, s_sum, thr_pv, t_cs, acc_o, acc_o_mn, row_max, row_sum, scale_log2,
            m_block, split, bi, tidx, wg, lane,
        )  # fmt: skip

    @cute.jit
    def rescale_pv(
        self,
        mma_pv: cute.TiledMma,
        t_ap: cute.Tensor,
        t_bv: cute.Tensor,
        t_cs: cute.Tensor,
        acc_o: cute.Tensor,
        acc_o_mn: cute.Tensor,
        s_corr: cute.Tensor,
        stage: cutlass.Int32,
        wg: cutlass.Int32,
    ):
        """Both warpgroups: wait for P, rescale O (warpgroup 1 reads the corrections), O += P V
        over their halves of the 512 columns."""
        n_rows = cute.size(acc_o_mn, mode=[0])
        # warpgroup 1 arrives here at once and waits for P and the corrections
        cute.arch.barrier(barrier_id=P_READY_BARRIER, number_of_threads=THREADS)
        if wg == 1:
            for r in cutlass.range_constexpr(n_rows):
                corr = s_corr[t_cs[r, 0][0]]
                acc_o_mn[r, None] = acc_o_mn[r, None].load() * corr

        # O += P V, each warpgroup over its half of D_V
        warpgroup.fence()
        pv = cute.make_mma_atom(mma_pv.op)
        pv.set(warpgroup.Field.ACCUMULATE, True)
        for k in cutlass.range_constexpr(cute.size(t_ap, mode=[2])):
            cute.gemm(pv, acc_o, t_ap[None, None, k], t_bv[None, None, k, stage], acc_o)
        warpgroup.commit_group()
        warpgroup.wait_group(0)

    @cute.jit
    def store_partial(
        self,
        m_o: cute.Tensor,
        m_lse: cute.Tensor,
        s_sum: cute.Tensor,
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
        """After the loop: row sums, O normalised, the partial (or output) and its LSE stored."""
        n_rows = cute.size(acc_o_mn, mode=[0])
        # warpgroup 0 finishes the row sums and posts them; both normalise their halves of O
        if wg == 0:
            for r in cutlass.range_constexpr(n_rows):
                total = quad_allreduce(row_sum[r], lambda a, b: a + b)
                row_sum[r] = total
                if lane % 4 == 0:
                    s_sum[t_cs[r, 0][0]] = total
        cute.arch.sync_threads()
        lse = cute.make_rmem_tensor((n_rows,), cutlass.Float32)
        for r in cutlass.range_constexpr(n_rows):
            total = s_sum[t_cs[r, 0][0]]
            empty = total == 0.0
            inv = 1.0 if empty else cute.arch.rcp_approx(total)
            acc_o_mn[r, None] = acc_o_mn[r, None].load() * inv
            lse[r] = (
                -cutlass.Float32.inf
                if empty
                else row_max[r] * scale_log2 + cute.math.log2(total, fastmath=True)
            )

        g_o = cute.local_tile(m_o[bi, split, None, None], (M_BLK, ref.D_V), (m_block, 0))
        r_o = cute.make_rmem_tensor_like(acc_o, m_o.element_type)
        r_o.store(acc_o.load().to(m_o.element_type))
        cute.autovec_copy(r_o, thr_pv.partition_C(g_o))

        if tidx < WG_THREADS and lane % 4 == 0:
            for r in cutlass.range_constexpr(n_rows):
                m_lse[bi, split, m_block * M_BLK + t_cs[r, 0][0]] = lse[r]


_HOST = VersionHost(VERSION, _MlaDecodeV6(), M_BLK, N_BLK, fused_merge=True, packed=True)
entry = _HOST.entry
example_args = _HOST.example_args
mla_decode = _HOST.mla_decode
