"""CuTe DSL MLA decode, version 1: warp tensor cores, cp.async double buffer, split-KV.

One CTA (8 warps) owns 64 query rows of one sequence (rows = the ``s*h`` query positions x
heads, which all share the one latent KV head) and a contiguous range of 64-row KV tiles:

- Q (64 x 576) is loaded once into swizzled shared memory; KV tiles (64 x 576, split into the
  512 latent and 64 rope columns) stream through two shared-memory stages with ``cp.async``.
- S = Q K^T with ``mma.sync m16n8k16`` (bf16 -> fp32). Warps 0-3 and 4-7 both compute S for their
  16 rows (the QK product is done twice) so that each warp can keep a 16 x 256 slice of the
  16 x 512 output accumulator in registers: warps 4-7 own the other half of D_V.
- Online softmax in registers (base-2), then O += P V with V = the first 512 columns of the
  SAME shared-memory KV tile, read transposed with ``ldmatrix.trans``: each KV row is read from
  global memory once per CTA for all 64 query rows.
- Split-KV: when the batch has too few CTAs for the GPU, KV tiles are split over CTAs and the
  fp32 partial outputs are merged with their log-sum-exp in torch (:func:`combine_splits`).

Limits: bf16/fp16; ``s*h`` must be a multiple of 64. Hopper-specific paths (wgmma) start at cute_v2.
"""

import cuda.bindings.driver as cuda
import cutlass
import cutlass.cute as cute
import cutlass.utils
from cutlass.cute.nvgpu import warp

from kernels.mla_decode import reference as ref
from kernels.mla_decode.cute_common import (
    VersionHost,
    cta_gmem_tiles,
    g2s_partitions,
    g2s_tiled_copy,
    kv_tile_range,
    mla_global_tensors,
    mn_view,
    quad_allreduce,
)

VERSION = "cute_v1"
DESCRIPTION = (
    "CuTe DSL: mma.sync m16n8k16 (64 query rows x 64 KV rows per step), cp.async double-buffered "
    "swizzled KV tiles shared by K and V, split-KV with a torch combine"
)

M_BLK = 64  # query rows per CTA
N_BLK = 64  # KV rows per pipeline step
STAGES = 2
THREADS = 256  # 8 warps: warp w owns rows 16*(w%4).. and D_V half w//4
QK_THREADS = 128  # the QK product uses a 4-warp tiled MMA, repeated by both warp halves
D_LAT = ref.D_LATENT  # 512
D_ROPE = ref.D_ROPE  # 64


class _MlaDecodeV1:
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

        # Shared memory: 8x64 atoms with the 128-byte swizzle (conflict-free ldmatrix).
        atom = cute.make_composed_layout(
            cute.make_swizzle(3, 3, 3), 0, cute.make_layout((8, 64), stride=(64, 1))
        )
        s_ql_layout = cute.tile_to_shape(atom, (M_BLK, D_LAT), (0, 1))
        s_qr_layout = cute.tile_to_shape(atom, (M_BLK, D_ROPE), (0, 1))
        s_kl_layout = cute.tile_to_shape(atom, (N_BLK, D_LAT, STAGES), (0, 1, 2))
        s_kr_layout = cute.tile_to_shape(atom, (N_BLK, D_ROPE, STAGES), (0, 1, 2))

        @cute.struct
        class SharedStorage:
            s_ql: cute.struct.Align[cute.struct.MemRange[dtype, cute.cosize(s_ql_layout)], 1024]
            s_qr: cute.struct.Align[cute.struct.MemRange[dtype, cute.cosize(s_qr_layout)], 1024]
            s_kl: cute.struct.Align[cute.struct.MemRange[dtype, cute.cosize(s_kl_layout)], 1024]
            s_kr: cute.struct.Align[cute.struct.MemRange[dtype, cute.cosize(s_kr_layout)], 1024]

        g2s = g2s_tiled_copy(dtype, THREADS)
        mma_atom = warp.MmaF16BF16Op(dtype, cutlass.Float32, (16, 8, 16))
        mma_qk = cute.make_tiled_mma(mma_atom, (4, 1, 1), permutation_mnk=(M_BLK, 16, 16))
        mma_pv = cute.make_tiled_mma(mma_atom, (4, 2, 1), permutation_mnk=(M_BLK, 32, 16))

        grid = (rows // M_BLK, splits, batch)
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
            g2s,
            mma_qk,
            mma_pv,
            SharedStorage,
        ).launch(
            grid=grid,
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
        g2s: cute.TiledCopy,
        mma_qk: cute.TiledMma,
        mma_pv: cute.TiledMma,
        SharedStorage: cutlass.Constexpr,
    ):
        tidx, _, _ = cute.arch.thread_idx()
        m_block, split, bi = cute.arch.block_idx()
        dtype = m_q.element_type

        seqlen, tile_begin, _, n_steps = kv_tile_range(m_lens, bi, split, tiles_per_split, N_BLK)

        # ---- tiles of this CTA in global memory
        g_ql, g_qr, g_kl, g_kr = cta_gmem_tiles(m_q, m_kv, bi, m_block, M_BLK, N_BLK)

        # ---- shared memory
        smem = cutlass.utils.SmemAllocator()
        storage = smem.allocate(SharedStorage)
        s_ql = storage.s_ql.get_tensor(s_ql_layout)
        s_qr = storage.s_qr.get_tensor(s_qr_layout)
        s_kl = storage.s_kl.get_tensor(s_kl_layout)  # (N, 512, STAGES)
        s_kr = storage.s_kr.get_tensor(s_kr_layout)  # (N, 64, STAGES)
        # V^T view of the latent K tile: (512, N, STAGES), element (d, n, s) = s_kl(n, d, s)
        s_vt = cute.composition(
            s_kl,
            cute.make_layout((D_LAT, N_BLK, STAGES), stride=(N_BLK, 1, N_BLK * D_LAT)),
        )

        # ---- global -> shared copies
        thr_g2s = g2s.get_slice(tidx)
        t_gql, t_sql, t_gqr, t_sqr, t_gkl, t_skl, t_gkr, t_skr, t_ckv = g2s_partitions(
            thr_g2s, N_BLK, g_ql, s_ql, g_qr, s_qr, g_kl, s_kl, g_kr, s_kr
        )

        # ---- MMA partitions
        thr_qk = mma_qk.get_slice(tidx % QK_THREADS)
        thr_pv = mma_pv.get_slice(tidx)
        t_rql = thr_qk.make_fragment_A(thr_qk.partition_A(s_ql))
        t_rqr = thr_qk.make_fragment_A(thr_qk.partition_A(s_qr))
        t_rkl = thr_qk.make_fragment_B(thr_qk.partition_B(s_kl[None, None, 0]))
        t_rkr = thr_qk.make_fragment_B(thr_qk.partition_B(s_kr[None, None, 0]))
        t_rvt = thr_pv.make_fragment_B(thr_pv.partition_B(s_vt[None, None, 0]))
        acc_o = cute.make_rmem_tensor(thr_pv.partition_shape_C((M_BLK, D_LAT)), cutlass.Float32)
        acc_o.fill(0.0)

        ldsm = warp.LdMatrix8x8x16bOp(transpose=False, num_matrices=4)
        ldsm_t = warp.LdMatrix8x8x16bOp(transpose=True, num_matrices=4)
        s2r_q = cute.make_tiled_copy_A(cute.make_copy_atom(ldsm, dtype), mma_qk)
        s2r_k = cute.make_tiled_copy_B(cute.make_copy_atom(ldsm, dtype), mma_qk)
        s2r_v = cute.make_tiled_copy_B(cute.make_copy_atom(ldsm_t, dtype), mma_pv)
        thr_s2r_q = s2r_q.get_slice(tidx % QK_THREADS)
        thr_s2r_k = s2r_k.get_slice(tidx % QK_THREADS)
        thr_s2r_v = s2r_v.get_slice(tidx)
        t_sql_r = thr_s2r_q.partition_S(s_ql)
        t_rql_v = thr_s2r_q.retile(t_rql)
        t_sqr_r = thr_s2r_q.partition_S(s_qr)
        t_rqr_v = thr_s2r_q.retile(t_rqr)
        t_skl_r = thr_s2r_k.partition_S(s_kl)  # (CPY, MMA_N, MMA_K, STAGES)
        t_rkl_v = thr_s2r_k.retile(t_rkl)
        t_skr_r = thr_s2r_k.partition_S(s_kr)
        t_rkr_v = thr_s2r_k.retile(t_rkr)
        t_svt_r = thr_s2r_v.partition_S(s_vt)  # (CPY, MMA_N, MMA_K, STAGES)
        t_rvt_v = thr_s2r_v.retile(t_rvt)

        # column index (within a KV tile) of each S accumulator element, for the length mask
        t_cs = mn_view(thr_qk.partition_C(cute.make_identity_tensor((M_BLK, N_BLK))))

        # ---- prologue: Q and the first KV tile
        cute.copy(g2s, t_gql, t_sql)
        cute.copy(g2s, t_gqr, t_sqr)
        if n_steps > 0:
            self.load_kv(g2s, t_gkl, t_skl, t_gkr, t_skr, t_ckv, tile_begin, 0, seqlen)
        cute.arch.cp_async_commit_group()

        row_max = cute.make_rmem_tensor((acc_o.shape[0][1] * acc_o.shape[1],), cutlass.Float32)
        row_sum = cute.make_rmem_tensor((acc_o.shape[0][1] * acc_o.shape[1],), cutlass.Float32)
        row_max.fill(-cutlass.Float32.inf)
        row_sum.fill(0.0)
        acc_o_mn = mn_view(acc_o)

        for step in range(n_steps):
            tile = tile_begin + step
            stage = step % STAGES
            cute.arch.cp_async_wait_group(0)
            cute.arch.sync_threads()
            if step + 1 < n_steps:
                self.load_kv(
                    g2s, t_gkl, t_skl, t_gkr, t_skr, t_ckv, tile + 1, (step + 1) % STAGES, seqlen
                )
            cute.arch.cp_async_commit_group()

            # S = Q K^T over the 512 latent + 64 rope columns
            acc_s = cute.make_rmem_tensor(thr_qk.partition_shape_C((M_BLK, N_BLK)), cutlass.Float32)
            acc_s.fill(0.0)
            for k in cutlass.range_constexpr(cute.size(t_sql_r.shape[2])):
                cute.copy(s2r_q, t_sql_r[None, None, k], t_rql_v[None, None, k])
                cute.copy(s2r_k, t_skl_r[None, None, k, stage], t_rkl_v[None, None, k])
                cute.gemm(mma_qk, acc_s, t_rql[None, None, k], t_rkl[None, None, k], acc_s)
            for k in cutlass.range_constexpr(cute.size(t_sqr_r.shape[2])):
                cute.copy(s2r_q, t_sqr_r[None, None, k], t_rqr_v[None, None, k])
                cute.copy(s2r_k, t_skr_r[None, None, k, stage], t_rkr_v[None, None, k])
                cute.gemm(mma_qk, acc_s, t_rqr[None, None, k], t_rkr[None, None, k], acc_s)

            # online softmax (base 2); keys at or past the sequence length get -inf
            valid = seqlen - tile * N_BLK
            acc_s_mn = mn_view(acc_s)
            for r in cutlass.range_constexpr(cute.size(row_max)):
                for c in cutlass.range_constexpr(cute.size(t_cs.shape[1])):
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

            # O += P V: the S accumulator (m16n8 C layout) re-read as the m16n8k16 A operand
            r_p = cute.make_fragment_like(acc_s, dtype)
            r_p.store(acc_s.load().to(dtype))
            p_div = cute.logical_divide(r_p.layout, (None, None, 2))
            p_layout = cute.make_layout(
                ((p_div.shape[0], p_div.shape[2][0]), p_div.shape[1], p_div.shape[2][1]),
                stride=((p_div.stride[0], p_div.stride[2][0]), p_div.stride[1], p_div.stride[2][1]),
            )
            t_rp = cute.make_tensor(r_p.iterator, p_layout)
            for k in cutlass.range_constexpr(cute.size(t_rp.shape[2])):
                cute.copy(s2r_v, t_svt_r[None, None, k, stage], t_rvt_v[None, None, k])
                cute.gemm(mma_pv, acc_o, t_rp[None, None, k], t_rvt[None, None, k], acc_o)

        # ---- epilogue: normalise, write O (fp32 partial or final dtype) and the base-2 LSE
        lse = cute.make_rmem_tensor((cute.size(row_max),), cutlass.Float32)
        for r in cutlass.range_constexpr(cute.size(row_max)):
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
        r_o = cute.make_fragment_like(acc_o, m_o.element_type)
        r_o.store(acc_o.load().to(m_o.element_type))
        cute.autovec_copy(r_o, thr_pv.partition_C(g_o))

        # rows are shared by the two warp halves and the 4 lanes of a quad: one writer per row
        lane = cute.arch.lane_idx()
        if tidx < QK_THREADS and lane % 4 == 0:
            t_co = mn_view(thr_pv.partition_C(cute.make_identity_tensor((M_BLK, ref.D_V))))
            for r in cutlass.range_constexpr(cute.size(row_max)):
                m_lse[bi, split, m_block * M_BLK + t_co[r, 0][0]] = lse[r]

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
        """Issue cp.async for KV tile ``tile`` into ``stage``; rows past the length become 0.

        Zero rows matter: their P is 0, but 0 * (garbage NaN) in P V would still poison O.
        """
        valid = seqlen - tile * N_BLK
        for n in cutlass.range_constexpr(cute.size(t_skl.shape[1])):
            if t_ckv[0, n, 0][0] < valid:
                cute.copy(g2s, t_gkl[None, n, None, tile], t_skl[None, n, None, stage])
                cute.copy(g2s, t_gkr[None, n, None, tile], t_skr[None, n, None, stage])
            else:
                t_skl[None, n, None, stage].fill(0)
                t_skr[None, n, None, stage].fill(0)


_HOST = VersionHost(VERSION, _MlaDecodeV1(), M_BLK, N_BLK)
entry = _HOST.entry
example_args = _HOST.example_args
mla_decode = _HOST.mla_decode
