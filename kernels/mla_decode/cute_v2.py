"""CuTe DSL MLA decode, version 2: Hopper warpgroup MMA (wgmma) instead of warp mma.sync.

Same work split as cute_v1 (64 query rows x a range of 64-row KV tiles per CTA, split-KV with a
torch combine, cp.async double buffer), but the products run on ``wgmma.mma_async``:

- Shared memory uses the wgmma 128-byte-swizzle canonical layouts, so the tensor cores read
  Q, K and V straight from shared memory through descriptors: no ldmatrix, and each operand tile
  is read once per warpgroup instead of once per warp (v1's shared-memory bottleneck).
- ONE shared KV tile serves as K (K-major, for S = Q K^T) and as V (MN-major, for O += P V): the
  two canonical layouts address the same bytes, so V costs no copy.
- Two warpgroups: both compute S = Q K^T (64 x 64, the product is done twice), each keeps a
  64 x 256 fp32 slice of O in registers. P goes from the S accumulator to the A operand of the
  PV wgmma in registers (the register-sourced "RS" form), with no shared-memory round trip.
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

VERSION = "cute_v2"
DESCRIPTION = (
    "CuTe DSL: wgmma (SS for Q K^T, RS for P V) on 128B-swizzled shared tiles, one KV tile "
    "read as K (K-major) and V (MN-major), 2 warpgroups splitting D_V, cp.async double buffer"
)

M_BLK = 64  # query rows per CTA = the wgmma M of one warpgroup
N_BLK = 64  # KV rows per pipeline step
STAGES = 2
THREADS = 256  # 2 warpgroups; warpgroup g owns O columns [256 g, 256 g + 256)
WG_THREADS = 128
D_LAT = ref.D_LATENT  # 512
D_ROPE = ref.D_ROPE  # 64


class _MlaDecodeV2:
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
        dtype = p_q.dtype
        m_q, m_kv, m_lens, m_o, m_lse = mla_global_tensors(
            p_q, p_kv, p_lens, p_o, p_lse, batch, rows, t_max, splits
        )

        # wgmma canonical layouts (128B swizzle): K-major for Q and K; the MN-major V^T view of
        # the KV stages addresses the same bytes as K
        s_ql_layout, s_qr_layout, s_kl_layout, s_kr_layout, s_vt_layout, _ = mla_smem_layouts(
            dtype, M_BLK, N_BLK, STAGES
        )

        @cute.struct
        class SharedStorage:
            s_ql: cute.struct.Align[cute.struct.MemRange[dtype, cute.cosize(s_ql_layout)], 1024]
            s_qr: cute.struct.Align[cute.struct.MemRange[dtype, cute.cosize(s_qr_layout)], 1024]
            s_kl: cute.struct.Align[cute.struct.MemRange[dtype, cute.cosize(s_kl_layout)], 1024]
            s_kr: cute.struct.Align[cute.struct.MemRange[dtype, cute.cosize(s_kr_layout)], 1024]

        g2s = g2s_tiled_copy(dtype, THREADS)
        mma_qk = wgmma_tiled(
            dtype, M_BLK, N_BLK, warpgroup.OperandSource.SMEM, warpgroup.OperandMajorMode.K
        )
        mma_pv = wgmma_tiled(
            dtype,
            M_BLK,
            D_LAT // 2,
            warpgroup.OperandSource.RMEM,
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

        thr_g2s = g2s.get_slice(tidx)
        t_gql, t_sql, t_gqr, t_sqr, t_gkl, t_skl, t_gkr, t_skr, t_ckv = g2s_partitions(
            thr_g2s, N_BLK, g_ql, s_ql, g_qr, s_qr, g_kl, s_kl, g_kr, s_kr
        )

        # wgmma operands are shared-memory descriptors (A of PV: registers, built per step)
        thr_qk = mma_qk.get_slice(tidx % WG_THREADS)
        thr_pv = mma_pv.get_slice(tidx)
        t_aql, t_aqr, t_bkl, t_bkr, t_bv = wgmma_smem_operands(
            mma_qk, thr_qk, mma_pv, thr_pv, s_ql, s_qr, s_kl, s_kr, s_vt
        )
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
            for r in cutlass.range_constexpr(n_rows):
                for c in cutlass.range_constexpr(cute.size(t_cs, mode=[1])):
                    if t_cs[0, c][1] >= valid:
                        acc_s_mn[r, c] = -cutlass.Float32.inf
                s_row = acc_s_mn[r, None].load()
                cur = s_row.reduce(cute.ReductionOp.MAX, -cutlass.Float32.inf, 0)
                cur = quad_allreduce(cur, cute.arch.fmax)
                new_max = cute.arch.fmax(row_max[r], cur)
                p_row = cute.math.exp2(s_row * scale_log2 - new_max * scale_log2, fastmath=True)
                corr = cute.math.exp2(row_max[r] * scale_log2 - new_max * scale_log2, fastmath=True)
                row_sum[r] = row_sum[r] * corr + p_row.reduce(
                    cute.ReductionOp.ADD, cutlass.Float32.zero, 0
                )
                acc_o_mn[r, None] = acc_o_mn[r, None].load() * corr
                row_max[r] = new_max
                acc_s_mn[r, None] = p_row

            # O += P V with P in registers (wgmma RS) and V^T from the same shared tile
            r_p = cute.make_rmem_tensor_like(acc_s, dtype)
            r_p.store(acc_s.load().to(dtype))
            t_ap = acc_as_wgmma_a(r_p)
            warpgroup.fence()
            pv = cute.make_mma_atom(mma_pv.op)
            pv.set(warpgroup.Field.ACCUMULATE, True)
            for k in cutlass.range_constexpr(cute.size(t_ap, mode=[2])):
                cute.gemm(pv, acc_o, t_ap[None, None, k], t_bv[None, None, k, stage], acc_o)
            warpgroup.commit_group()
            warpgroup.wait_group(0)

        lse = cute.make_rmem_tensor((n_rows,), cutlass.Float32)
        for r in cutlass.range_constexpr(n_rows):
            total = quad_allreduce(row_sum[r], lambda a, b: a + b)
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

        lane = cute.arch.lane_idx()
        if tidx < WG_THREADS and lane % 4 == 0:
            t_co = mn_view(thr_pv.partition_C(cute.make_identity_tensor((M_BLK, ref.D_V))))
            for r in cutlass.range_constexpr(n_rows):
                m_lse[bi, split, m_block * M_BLK + t_co[r, 0][0]] = lse[r]

    @cute.jit
    def next_kv_tile(
        self,
        g2s: cute.TiledCopy,
        t_gkl: cute.Tensor,
        t_skl: cute.Tensor,
        t_gkr: cute.Tensor,
        t_skr: cute.Tensor,
        t_ckv: cute.Tensor,
        step: cutlass.Int32,
        n_steps: cutlass.Int32,
        tile: cutlass.Int32,
        seqlen: cutlass.Int32,
    ):
        """Top of step ``step`` (KV tile ``tile``): wait until the tile is in shared memory for
        every thread, then issue the copies of the next tile into the other stage. The CTA
        barrier also means every thread is done with step - 1 (the stage being overwritten)."""
        cute.arch.cp_async_wait_group(0)
        # cp.async and zero-fill stores are generic-proxy writes; wgmma reads through the
        # async proxy, so each writer fences before the barrier.
        cute.arch.fence_view_async_shared()
        cute.arch.sync_threads()
        if step + 1 < n_steps:
            self.load_kv(
                g2s, t_gkl, t_skl, t_gkr, t_skr, t_ckv, tile + 1, (step + 1) % STAGES, seqlen
            )
        cute.arch.cp_async_commit_group()

    @cute.jit
    def load_kv(
        self,
        g2s: cute.TiledCopy,
        t_gkl: cute.Tensor,
        t_skl: cute.Tensor,
        t_gkr: cute.Tensor,
        t_skr: cute.Tensor,
        t_ckv: cute.Tensor,
        tile: cutlass.Int32,
        stage: cutlass.Int32,
        seqlen: cutlass.Int32,
    ):
        """cp.async KV tile ``tile`` into ``stage``; rows past the length become 0 (see v1)."""
        valid = seqlen - tile * N_BLK
        for n in cutlass.range_constexpr(cute.size(t_skl.shape[1])):
            if t_ckv[0, n, 0][0] < valid:
                cute.copy(g2s, t_gkl[None, n, None, tile], t_skl[None, n, None, stage])
                cute.copy(g2s, t_gkr[None, n, None, tile], t_skr[None, n, None, stage])
            else:
                # swizzled shared tensors take no .fill(): store a zero register fragment
                zl = cute.make_rmem_tensor(t_skl[None, n, None, stage].shape, t_skl.element_type)
                zr = cute.make_rmem_tensor(t_skr[None, n, None, stage].shape, t_skr.element_type)
                zl.fill(0)
                zr.fill(0)
                store = cute.make_copy_atom(
                    cute.nvgpu.CopyUniversalOp(), t_skl.element_type, num_bits_per_copy=128
                )
                cute.copy(store, zl, t_skl[None, n, None, stage])
                cute.copy(store, zr, t_skr[None, n, None, stage])


_HOST = VersionHost(VERSION, _MlaDecodeV2(), M_BLK, N_BLK)
entry = _HOST.entry
example_args = _HOST.example_args
mla_decode = _HOST.mla_decode
