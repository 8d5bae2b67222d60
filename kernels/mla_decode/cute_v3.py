"""CuTe DSL MLA decode, version 3: v2 without the duplicated Q K^T.

cute_v2 has both warpgroups compute the whole 64 x 64 score tile (the QK product twice). Here
warpgroup g computes only the scores of KV rows [32 g, 32 g + 32) of each tile (wgmma m64n32),
and the two halves meet in shared memory:

- row maxima: each warpgroup posts its partial row max, both read the other's, so both use the
  same running max (and the same rescale factor for their O slices);
- P: each warpgroup stores its bf16 P columns into a 64 x 64 shared tile (128B swizzle, K-major),
  fences the async proxy, and both then run O += P V with P AND V from shared memory (SS wgmma,
  m64n256 per warpgroup over its half of D_V);
- row sums stay per warpgroup (same max, so they add) and are merged once at the end.

Per KV tile: half the QK tensor work of v2, a quarter less shared-memory operand traffic, two
more CTA barriers. Everything else (split-KV, cp.async double buffer, one tile as K and V) as v2.
"""

from typing import Any

import cuda.bindings.driver as cuda
import cutlass
import cutlass.cute as cute
import cutlass.utils
from cutlass.cute.nvgpu import warpgroup

from kernels.mla_decode import reference as ref
from kernels.mla_decode.cute_common import (
    VersionHost,
    cta_gmem_tiles,
    g2s_partitions,
    g2s_tiled_copy,
    kv_tile_range,
    mla_global_tensors,
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
from kernels.mla_decode.cute_v2 import (
    D_LAT,
    M_BLK,
    N_BLK,
    STAGES,
    THREADS,
    WG_THREADS,
    _MlaDecodeV2,
)

VERSION = "cute_v3"
DESCRIPTION = (
    "CuTe DSL: v2 with the score tile split between the 2 warpgroups (wgmma m64n32 each, no "
    "duplicated Q K^T), row max and P exchanged through shared memory, SS wgmma for P V"
)


class _MlaDecodeV3(_MlaDecodeV2):
    """v2's KV loader (:meth:`load_kv`, inherited); the split score tile's entry and kernel."""

    @cute.jit
    def __call__(
        self,
        p_q: cute.Pointer,
        p_kv: cute.Pointer,
        p_lens: cute.Pointer,
        p_o: cute.Pointer,
        p_lse: cute.Pointer,
        batch: cutlass.Int32,
        rows: cutlass.Int32,
        t_max: cutlass.Int32,
        splits: cutlass.Int32,
        tiles_per_split: cutlass.Int32,
        scale_log2: cutlass.Float32,
        stream: cuda.CUstream,
    ):
        self.launch_attention(
            p_q,
            p_kv,
            p_lens,
            p_o,
            p_lse,
            batch,
            rows,
            t_max,
            splits,
            tiles_per_split,
            scale_log2,
            stream,
        )

    def launch_attention(
        self,
        p_q: cute.Pointer,
        p_kv: cute.Pointer,
        p_lens: cute.Pointer,
        p_o: cute.Pointer,
        p_lse: cute.Pointer,
        batch: cutlass.Int32,
        rows: cutlass.Int32,
        t_max: cutlass.Int32,
        splits: cutlass.Int32,
        tiles_per_split: cutlass.Int32,
        scale_log2: cutlass.Float32,
        stream: cuda.CUstream,
    ) -> tuple[cute.Tensor, cute.Tensor]:
        """Launch the attention kernel (traced from the ``@cute.jit`` entry); returns the views
        of the partial O and the LSE, for an entry that also merges the splits (cute_v4).
        What cute_v6 changes here are :meth:`shared_storage` and :meth:`score_mma`."""
        dtype = p_q.dtype
        m_q, m_kv, m_lens, m_o, m_lse = mla_global_tensors(
            p_q, p_kv, p_lens, p_o, p_lse, batch, rows, t_max, splits
        )

        # wgmma canonical layouts (128B swizzle): K-major for Q and K; the MN-major V^T view of
        # the KV stages addresses the same bytes as K
        s_ql_layout, s_qr_layout, s_kl_layout, s_kr_layout, s_vt_layout, s_p_layout = (
            mla_smem_layouts(dtype, M_BLK, N_BLK, STAGES)
        )

        SharedStorage = self.shared_storage(
            dtype, s_ql_layout, s_qr_layout, s_kl_layout, s_kr_layout, s_p_layout
        )

        g2s = g2s_tiled_copy(dtype, THREADS)
        mma_qk = self.score_mma(dtype)
        mma_pv = wgmma_tiled(
            dtype,
            M_BLK,
            D_LAT // 2,
            warpgroup.OperandSource.SMEM,
            warpgroup.OperandMajorMode.MN,
            atoms_n=2,
        )

        self.kernel(
            m_q,
            m_kv,
            m_lens,
            m_o,
            m_lse,
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
        return m_o, m_lse

    def shared_storage(
        self,
        dtype: Any,
        s_ql_layout: Any,
        s_qr_layout: Any,
        s_kl_layout: Any,
        s_kr_layout: Any,
        s_p_layout: Any,
    ) -> Any:
        """The kernel's shared memory (traced from the entry)."""

        @cute.struct
        class SharedStorage:
            s_ql: cute.struct.Align[cute.struct.MemRange[dtype, cute.cosize(s_ql_layout)], 1024]
            s_qr: cute.struct.Align[cute.struct.MemRange[dtype, cute.cosize(s_qr_layout)], 1024]
            s_kl: cute.struct.Align[cute.struct.MemRange[dtype, cute.cosize(s_kl_layout)], 1024]
            s_kr: cute.struct.Align[cute.struct.MemRange[dtype, cute.cosize(s_kr_layout)], 1024]
            s_p: cute.struct.Align[cute.struct.MemRange[dtype, cute.cosize(s_p_layout)], 1024]
            # per warpgroup: partial row max (each step) and row sum (at the end)
            s_max: cute.struct.Align[cute.struct.MemRange[cutlass.Float32, 2 * M_BLK], 16]
            s_sum: cute.struct.Align[cute.struct.MemRange[cutlass.Float32, 2 * M_BLK], 16]

        return SharedStorage

    def score_mma(self, dtype: Any) -> Any:
        """The score product's tiled MMA: warpgroup g computes score columns [32 g, 32 g + 32)."""
        return wgmma_tiled(
            dtype,
            M_BLK,
            N_BLK // 2,
            warpgroup.OperandSource.SMEM,
            warpgroup.OperandMajorMode.K,
            atoms_n=2,
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

        seqlen, tile_begin, _, n_steps = kv_tile_range(m_lens, bi, split, tiles_per_split, N_BLK)

        g_ql, g_qr, g_kl, g_kr = cta_gmem_tiles(m_q, m_kv, bi, m_block, M_BLK, N_BLK)

        smem = cutlass.utils.SmemAllocator()
        storage = smem.allocate(SharedStorage)
        # K-major K tile (N, 512, STAGES) and its MN-major V^T view (512, N, STAGES): same bytes
        s_ql, s_qr, s_kl, s_kr, s_vt = mla_smem_tensors(
            storage, s_ql_layout, s_qr_layout, s_kl_layout, s_kr_layout, s_vt_layout
        )
        s_p = storage.s_p.get_tensor(s_p_layout.outer, swizzle=s_p_layout.inner)
        s_max = storage.s_max.get_tensor(cute.make_layout((M_BLK, 2)))
        s_sum = storage.s_sum.get_tensor(cute.make_layout((M_BLK, 2)))
        wg = tidx // WG_THREADS

        thr_g2s = g2s.get_slice(tidx)
        t_gql, t_sql, t_gqr, t_sqr, t_gkl, t_skl, t_gkr, t_skr, t_ckv = g2s_partitions(
            thr_g2s, N_BLK, g_ql, s_ql, g_qr, s_qr, g_kl, s_kl, g_kr, s_kr
        )

        # wgmma operands are shared-memory descriptors
        thr_qk = mma_qk.get_slice(tidx)
        thr_pv = mma_pv.get_slice(tidx)
        t_aql, t_aqr, t_bkl, t_bkr, t_bv = wgmma_smem_operands(
            mma_qk, thr_qk, mma_pv, thr_pv, s_ql, s_qr, s_kl, s_kr, s_vt
        )
        t_ap = mma_pv.make_fragment_A(thr_pv.partition_A(s_p))  # (MMA, M, K)
        # where this thread's P values go in the shared P tile (its S accumulator positions)
        t_sp = thr_qk.partition_C(s_p)
        p_store = cute.make_copy_atom(cute.nvgpu.CopyUniversalOp(), dtype, num_bits_per_copy=32)
        acc_o = cute.make_rmem_tensor(thr_pv.partition_shape_C((M_BLK, D_LAT)), cutlass.Float32)
        acc_o.fill(0.0)
        acc_o_mn = mn_view(acc_o)
        t_cs = mn_view(thr_qk.partition_C(cute.make_identity_tensor((M_BLK, N_BLK))))

        cute.copy(g2s, t_gql, t_sql)
        cute.copy(g2s, t_gqr, t_sqr)
        if n_steps > 0:
            self.load_kv(g2s, t_gkl, t_skl, t_gkr, t_skr, t_ckv, tile_begin, 0, seqlen)
        cute.arch.cp_async_commit_group()

        n_rows, row_max, row_sum = softmax_state(acc_o_mn)

        for step in range(n_steps):
            tile = tile_begin + step
            stage = step % STAGES
            self.next_kv_tile(g2s, t_gkl, t_skl, t_gkr, t_skr, t_ckv, step, n_steps, tile, seqlen)

            # S = Q K^T: 32 latent + 4 rope k16 steps, operands from shared memory
            acc_s = qk_scores(mma_qk, thr_qk, t_aql, t_aqr, t_bkl, t_bkr, stage, M_BLK, N_BLK)

            valid = seqlen - tile * N_BLK
            acc_s_mn = mn_view(acc_s)
            lane = cute.arch.lane_idx()
            # partial row max over this warpgroup's 32 columns, posted for the other warpgroup
            part_max = cute.make_rmem_tensor((n_rows,), cutlass.Float32)
            for r in cutlass.range_constexpr(n_rows):
                for c in cutlass.range_constexpr(cute.size(t_cs, mode=[1])):
                    if t_cs[0, c][1] >= valid:
                        acc_s_mn[r, c] = -cutlass.Float32.inf
                cur = acc_s_mn[r, None].load().reduce(cute.ReductionOp.MAX, -cutlass.Float32.inf, 0)
                part_max[r] = quad_allreduce(cur, cute.arch.fmax)
                if lane % 4 == 0:
                    s_max[t_cs[r, 0][0], wg] = part_max[r]
            cute.arch.sync_threads()
            for r in cutlass.range_constexpr(n_rows):
                other = s_max[t_cs[r, 0][0], 1 - wg]
                new_max = cute.arch.fmax(row_max[r], cute.arch.fmax(part_max[r], other))
                s_row = acc_s_mn[r, None].load()
                p_row = cute.math.exp2(s_row * scale_log2 - new_max * scale_log2, fastmath=True)
                corr = cute.math.exp2(row_max[r] * scale_log2 - new_max * scale_log2, fastmath=True)
                row_sum[r] = row_sum[r] * corr + p_row.reduce(
                    cute.ReductionOp.ADD, cutlass.Float32.zero, 0
                )
                acc_o_mn[r, None] = acc_o_mn[r, None].load() * corr
                row_max[r] = new_max
                acc_s_mn[r, None] = p_row

            # P (bf16) into shared memory; the tensor cores read it through the async proxy
            r_p = cute.make_rmem_tensor_like(acc_s, dtype)
            r_p.store(acc_s.load().to(dtype))
            cute.copy(p_store, r_p, t_sp)
            cute.arch.fence_view_async_shared()
            cute.arch.sync_threads()

            # O += P V, both operands from shared memory, each warpgroup over its half of D_V
            warpgroup.fence()
            pv = cute.make_mma_atom(mma_pv.op)
            pv.set(warpgroup.Field.ACCUMULATE, True)
            for k in cutlass.range_constexpr(cute.size(t_ap, mode=[2])):
                cute.gemm(pv, acc_o, t_ap[None, None, k], t_bv[None, None, k, stage], acc_o)
            warpgroup.commit_group()
            warpgroup.wait_group(0)

        # row sums: this warpgroup's columns + the other's (both used the same running max)
        lane = cute.arch.lane_idx()
        part_sum = cute.make_rmem_tensor((n_rows,), cutlass.Float32)
        for r in cutlass.range_constexpr(n_rows):
            part_sum[r] = quad_allreduce(row_sum[r], lambda a, b: a + b)
            if lane % 4 == 0:
                s_sum[t_cs[r, 0][0], wg] = part_sum[r]
        cute.arch.sync_threads()
        lse = cute.make_rmem_tensor((n_rows,), cutlass.Float32)
        for r in cutlass.range_constexpr(n_rows):
            total = part_sum[r] + s_sum[t_cs[r, 0][0], 1 - wg]
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
            t_co = mn_view(thr_pv.partition_C(cute.make_identity_tensor((M_BLK, ref.D_V))))
            for r in cutlass.range_constexpr(n_rows):
                m_lse[bi, split, m_block * M_BLK + t_co[r, 0][0]] = lse[r]


_HOST = VersionHost(VERSION, _MlaDecodeV3(), M_BLK, N_BLK)
entry = _HOST.entry
example_args = _HOST.example_args
mla_decode = _HOST.mla_decode
