"""CuTe DSL MLA decode, version 11: cute_v7's schedule with its KV tiles loaded by TMA.

**What changed from cute_v7.** Only how a KV tile reaches shared memory. In v7 the 128 threads
of warpgroup 1 each issue 36 ``cp.async`` copies of 16 bytes per tile (with a row predicate
each), then everyone waits with ``cp.async.wait_group`` and a CTA barrier. Here one warp (the
first of warpgroup 1; ``elect.sync`` picks the lane) issues the tile as two TMA tiled copies:
the 512 latent columns (the K view and the V^T view share them) and the 64 rope columns,
described by two tensor maps over the same cache tensor ``[t_max, 576, batch]``. With the
128-byte swizzle a TMA box is at most 64 columns wide, so a tile is nine
``cp.async.bulk.tensor.3d`` instructions (eight latent boxes, one rope box), all completing on
one transaction mbarrier per shared-memory stage; the consumers wait on that mbarrier's phase
instead of on ``cp.async`` groups. The CTA barrier at the top of each step stays: it also keeps
warpgroup 0 from overwriting P while warpgroup 1 still multiplies it (v7's schedule). The score
product, the softmax, P@V split between the warpgroups, the masking of the partial tile, the
epilogue and the in-kernel split merge are v7's methods, called unchanged. Q is still loaded
once with ``cp.async`` by warpgroup 1 (one 72 KB copy per CTA, outside the loop).

**Barrier protocol (one mbarrier per stage, not per 64-column slice).**

- ``s_full[s]`` (s = 0, 1), 8 bytes each, initialised by thread 0 with an arrival count of 1,
  then ``fence.mbarrier_init`` and a CTA barrier before any use.
- Producer: the first warp of warpgroup 1, all 32 lanes converged (CuTe DSL's TMA copy and
  ``elect_one`` elect a lane with ``elect.sync`` over the full warp, which waits for every
  lane: called from a one-thread branch it never returns, read from the PTX as the cause of the
  first version's hang on the H200, 2026-12-03). Its elected lane arrives on ``s_full[s]`` with
  ``expect_tx`` of the whole tile, 64 rows x 576 columns x 2 bytes = 73,728 bytes, and issues
  both copies with ``s_full[s]`` as their completion barrier. TMA counts the full box bytes
  even for rows it zero-fills (rows >= t_max), so the count is the same for every tile. The
  phase completes when the arrival and all 73,728 bytes are in.
- Tile ``step`` of a CTA goes to stage ``step % 2``; it is the ``step // 2``-th fill of that
  stage, so all 256 threads wait for parity ``(step // 2) % 2`` of ``s_full[step % 2]``.
- Stage reuse: tile ``step + 1`` is issued (into the stage that tile ``step - 1`` used) only
  after the CTA barrier at the top of step ``step``, which every thread passes after its
  step-1 wgmma reading that stage completed (``wgmma.wait_group 0``) and after its wait on
  that stage's previous phase. So a barrier never runs more than one phase ahead of a waiter,
  and TMA never overwrites bytes a wgmma may still read. Every issued copy is waited on:
  tile ``step + 1`` is issued only if ``step + 1 < n_steps``.
- Rows past the sequence's length inside ``t_max`` hold arbitrary cache data (NaN in the
  tests). The scores of those rows are masked to -inf as in v7, but P = 0 times a NaN V row
  would still poison O, so on the partial tile only (a uniform branch) warpgroup 1 writes
  zeros over rows ``>= valid`` of the stage's 512 latent columns after the mbarrier wait and
  before the CTA barrier, with ``fence.proxy.async.shared::cta`` so that the wgmma (async
  proxy) sees the zeros. The rope columns need no zeros: they only feed masked scores.

**Shared memory.** v7's plan plus 16 bytes: Q 64 KB + 8 KB, two KV stages of 72 KB, P 8 KB,
row corrections and sums 512 B, merge flag 16 B, two mbarriers 16 B: 230,400 bytes with
the alignment padding (``SharedStorage.size_in_bytes()`` at trace time) of the 232,448 an
sm_90 CTA may use; nine mbarriers per stage (144 B) would still fit.

**Registers.** Warpgroup 1 no longer holds 36 source/destination address pairs and row
predicates for the loop's copies, so its register demand falls; the kernel's count is set by
warpgroup 0's score tile and O half anyway.

**Prediction.** The per-tile work of the tensor cores is unchanged (~2,180 cycles at peak,
see cute_v10), so TMA can only win the part of v7's ~4,750 (decode) / ~3,600 (speculative)
cycles per tile that comes from the loads: warpgroup 1's 36 cp.async per thread (144 warp
instructions per tile, with their address and predicate arithmetic, issued beside warpgroup
0's softmax on the same SM sub-partitions), and the cp.async wait + CTA barrier at the top of
each step. The next tile is already loaded during a whole step in v7, so load latency is
mostly hidden and the gain should be small: cute_v11 0-5% faster than cute_v7 at decode
(where the loads weigh most per unit of tensor work) and within +-2% in the speculative case.
A per-stage barrier cannot start the score product on the first 64-column slices the way a
per-slice barrier could; that is left for a next version.
"""

from typing import Any

import cutlass
import cutlass.cute as cute
import cutlass.utils
from cutlass.cute.nvgpu import cpasync

from kernels.mla_decode import reference as ref
from kernels.mla_decode.cute_common import (
    VersionHost,
    kv_tile_range,
    mla_smem_tensors,
    mn_view,
    softmax_state,
    wgmma_smem_operands,
)

# v2's block sizes and two-warpgroup thread layout
from kernels.mla_decode.cute_v2 import D_LAT, D_ROPE, M_BLK, N_BLK, STAGES, WG_THREADS
from kernels.mla_decode.cute_v7 import _MlaDecodeV7

VERSION = "cute_v11"
DESCRIPTION = (
    "CuTe DSL: cute_v7 with each KV tile loaded by TMA (one thread, two tiled bulk-tensor "
    "copies) completing on a transaction mbarrier per shared-memory stage"
)

# The first warp of warpgroup 1 issues every TMA copy, as a whole warp: CuTe DSL's TMA copy
# (and elect_one around the expect-tx arrive) elects its lane with elect.sync over all 32
# lanes, which waits for every lane of the warp, so a branch taken by one thread never returns.
PRODUCER_WARP = WG_THREADS // 32
PRODUCER = WG_THREADS  # its lane 0 alone prefetches the two descriptors (no election there)


class _MlaDecodeV11(_MlaDecodeV7):
    """v7's kernel with the KV loads by TMA. Only the loads, the shared storage and the loop
    head are v11's own. The entry is v7's, with v11's :meth:`shared_storage` (the mbarriers)
    and :meth:`kv_load_args` (the TMA atoms and tensor maps); a step's compute
    (``score_softmax``, ``rescale_pv``), the epilogue (``finish``) and the split merge
    (``merge_if_last``) are v7's methods.

    What cute_v12 changes (the barriers per stage, the TMA boxes, and where the consumers
    wait) are the methods and the class attribute below the kernel: :attr:`KV_BARRIERS`,
    :meth:`make_latent_tma`, :meth:`partition_latent_tma`, :meth:`tma_load_kv`, :meth:`wait_tile`,
    :meth:`slice_ready` and :meth:`wait_v`. They are traced inline, so the PTX is the same as
    with their v11 bodies written out in the kernel."""

    KV_BARRIERS = 1  # transaction mbarriers per shared-memory stage: one for the whole tile

    def __init__(self) -> None:  # no knobs (v7's L2 prefetch distance does not apply)
        super().__init__(l2_prefetch_distance=0)

    def shared_storage(
        self,
        dtype: Any,
        s_ql_layout: Any,
        s_qr_layout: Any,
        s_kl_layout: Any,
        s_kr_layout: Any,
        s_p_layout: Any,
    ) -> Any:
        """v7's shared memory plus :attr:`KV_BARRIERS` transaction mbarriers per stage."""

        @cute.struct
        class SharedStorage:
            s_ql: cute.struct.Align[cute.struct.MemRange[dtype, cute.cosize(s_ql_layout)], 1024]
            s_qr: cute.struct.Align[cute.struct.MemRange[dtype, cute.cosize(s_qr_layout)], 1024]
            s_kl: cute.struct.Align[cute.struct.MemRange[dtype, cute.cosize(s_kl_layout)], 1024]
            s_kr: cute.struct.Align[cute.struct.MemRange[dtype, cute.cosize(s_kr_layout)], 1024]
            s_p: cute.struct.Align[cute.struct.MemRange[dtype, cute.cosize(s_p_layout)], 1024]
            s_corr: cute.struct.Align[cute.struct.MemRange[cutlass.Float32, M_BLK], 16]
            s_sum: cute.struct.Align[cute.struct.MemRange[cutlass.Float32, M_BLK], 16]
            s_arrived: cute.struct.Align[cute.struct.MemRange[cutlass.Int32, 4], 16]
            s_full: cute.struct.Align[
                cute.struct.MemRange[cutlass.Int64, STAGES * self.KV_BARRIERS], 8
            ]

        return SharedStorage

    def kv_load_args(
        self, p_kv: cute.Pointer, batch: Any, t_max: Any, s_kl_layout: Any, s_kr_layout: Any
    ) -> tuple[Any, ...]:
        """``(tma_kl, g_kl_tma, tma_kr, g_kr_tma)`` for the kernel (:meth:`make_kv_tma`). v7's
        entry builds the rest, including the cp.async copy that warpgroup 1 still uses for Q
        and for the partial tile's zeros."""
        # the cache as [t, 576, batch] for the tensor maps (TMA tiles the leading modes)
        m_kv_tma = cute.make_tensor(
            p_kv,
            cute.make_layout(
                (t_max, ref.D_QK, batch),
                stride=(ref.D_QK, 1, cute.assume(t_max * ref.D_QK, divby=64)),
            ),
        )
        return self.make_kv_tma(m_kv_tma, s_kl_layout, s_kr_layout)

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
        wg_tidx = tidx % WG_THREADS
        warp_idx = cute.arch.make_warp_uniform(cute.arch.warp_idx())

        seqlen, tile_begin, _, n_steps = kv_tile_range(m_lens, bi, split, tiles_per_split, N_BLK)

        q_b = m_q[bi, None, None]
        g_ql = cute.local_tile(q_b, (M_BLK, D_LAT), (m_block, 0))
        g_qr = cute.local_tile(q_b, (M_BLK, D_ROPE), (m_block, D_LAT // D_ROPE))

        smem = cutlass.utils.SmemAllocator()
        storage = smem.allocate(SharedStorage)
        s_ql, s_qr, s_kl, s_kr, s_vt = mla_smem_tensors(
            storage, s_ql_layout, s_qr_layout, s_kl_layout, s_kr_layout, s_vt_layout
        )
        s_p = storage.s_p.get_tensor(s_p_layout.outer, swizzle=s_p_layout.inner)
        s_corr = storage.s_corr.get_tensor(cute.make_layout((M_BLK,)))
        s_sum = storage.s_sum.get_tensor(cute.make_layout((M_BLK,)))
        s_arrived = storage.s_arrived.get_tensor(cute.make_layout((4,)))
        s_full = storage.s_full.data_ptr()

        t_skl_tma, t_gkl_tma, t_skr_tma, t_gkr_tma = self.partition_kv_tma(
            tma_kl, g_kl_tma, tma_kr, g_kr_tma, s_kl, s_kr, bi
        )

        thr_g2s = g2s.get_slice(wg_tidx)  # used by warpgroup 1 only
        t_gql = thr_g2s.partition_S(g_ql)
        t_sql = thr_g2s.partition_D(s_ql)
        t_gqr = thr_g2s.partition_S(g_qr)
        t_sqr = thr_g2s.partition_D(s_qr)
        t_skl = thr_g2s.partition_D(s_kl)  # the partial tile's zeros
        t_ckv = thr_g2s.partition_S(cute.make_identity_tensor((N_BLK, D_LAT)))

        thr_qk = mma_qk.get_slice(wg_tidx)
        thr_pv = mma_pv.get_slice(tidx)
        t_aql, t_aqr, t_bkl, t_bkr, t_bv = wgmma_smem_operands(
            mma_qk, thr_qk, mma_pv, thr_pv, s_ql, s_qr, s_kl, s_kr, s_vt
        )
        t_ap = mma_pv.make_fragment_A(thr_pv.partition_A(s_p))
        t_sp = thr_qk.partition_C(s_p)
        p_store = cute.make_copy_atom(cute.nvgpu.CopyUniversalOp(), dtype, num_bits_per_copy=32)
        acc_o = cute.make_rmem_tensor(thr_pv.partition_shape_C((M_BLK, D_LAT)), cutlass.Float32)
        acc_o.fill(0.0)
        acc_o_mn = mn_view(acc_o)
        t_cs = mn_view(thr_qk.partition_C(cute.make_identity_tensor((M_BLK, N_BLK))))
        lane = cute.arch.lane_idx()

        if tidx == 0:
            for s in cutlass.range_constexpr(STAGES * self.KV_BARRIERS):
                cute.arch.mbarrier_init(s_full + s, 1)
        cute.arch.mbarrier_init_fence()
        cute.arch.sync_threads()  # the barriers are initialised before anyone uses them

        if wg == 1:
            cute.copy(g2s, t_gql, t_sql)
            cute.copy(g2s, t_gqr, t_sqr)
            if tidx == PRODUCER:
                cpasync.prefetch_descriptor(tma_kl)
                cpasync.prefetch_descriptor(tma_kr)
            if warp_idx == PRODUCER_WARP:  # noqa: SIM102 (nested: dynamic conditions)
                if n_steps > 0:
                    self.tma_load_kv(
                        tma_kl,
                        tma_kr,
                        t_gkl_tma,
                        t_skl_tma,
                        t_gkr_tma,
                        t_skr_tma,
                        s_full,
                        tile_begin,
                        0,
                    )
        cute.arch.cp_async_commit_group()

        _, row_max, row_sum = softmax_state(acc_o_mn)

        for step in range(n_steps):
            tile = tile_begin + step
            stage = step % STAGES
            valid = seqlen - tile * N_BLK
            cute.arch.cp_async_wait_group(0)  # Q (warpgroup 1's cp.async; step 0 only)
            self.wait_tile(s_full, stage, step, valid, wg, t_skl, t_ckv)
            cute.arch.fence_view_async_shared()
            # tile `step` (and Q) is in shared memory for everyone, and both warpgroups are
            # done with step - 1 (its P and the stage the next TMA copy overwrites)
            cute.arch.sync_threads()
            if warp_idx == PRODUCER_WARP:  # noqa: SIM102 (nested: dynamic conditions)
                if step + 1 < n_steps:
                    self.tma_load_kv(
                        tma_kl,
                        tma_kr,
                        t_gkl_tma,
                        t_skl_tma,
                        t_gkr_tma,
                        t_skr_tma,
                        s_full,
                        tile + 1,
                        (step + 1) % STAGES,
                    )

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
                    self.slice_ready(s_full, stage, step),
                )
            self.wait_v(s_full, stage, step, wg)
            self.rescale_pv(mma_pv, t_ap, t_bv, t_cs, acc_o, acc_o_mn, s_corr, stage, wg)

        self.finish(
            m_o, m_lse, m_out, m_sem, s_sum, s_arrived, thr_pv, t_cs, acc_o, acc_o_mn,
            row_max, row_sum, scale_log2, m_block, split, bi, tidx, wg, lane,
        )  # fmt: skip

    def make_kv_tma(
        self, m_kv_tma: cute.Tensor, s_kl_layout: Any, s_kr_layout: Any
    ) -> tuple[Any, Any, Any, Any]:
        """Host side: TMA atom and global view of the latent columns (:meth:`make_latent_tma`)
        and of the rope columns (one 64 x 64 box)."""
        tma_kl, g_kl_tma = self.make_latent_tma(m_kv_tma, s_kl_layout)
        tma_kr, g_kr_tma = cpasync.make_tiled_tma_atom(
            cpasync.CopyBulkTensorTileG2SOp(),
            m_kv_tma,
            cute.slice_(s_kr_layout, (None, None, 0)),
            (N_BLK, D_ROPE),
        )
        return tma_kl, g_kl_tma, tma_kr, g_kr_tma

    def make_latent_tma(self, m_kv_tma: cute.Tensor, s_kl_layout: Any) -> tuple[Any, Any]:
        """The latent columns as one 64 x 512 tile per copy (CuTe DSL issues it as eight
        64-column boxes, the widest the 128-byte swizzle allows)."""
        return cpasync.make_tiled_tma_atom(
            cpasync.CopyBulkTensorTileG2SOp(),
            m_kv_tma,
            cute.slice_(s_kl_layout, (None, None, 0)),
            (N_BLK, D_LAT),
        )

    def partition_kv_tma(
        self,
        tma_kl: cute.CopyAtom,
        g_kl_tma: cute.Tensor,
        tma_kr: cute.CopyAtom,
        g_kr_tma: cute.Tensor,
        s_kl: cute.Tensor,
        s_kr: cute.Tensor,
        bi: cutlass.Int32,
    ) -> tuple[Any, Any, Any, Any]:
        """TMA views ``(smem latent, global latent, smem rope, global rope)``: rope as
        ((box), stage) in shared memory and ((box), tile) of sequence ``bi`` in global memory;
        latent from :meth:`partition_latent_tma`."""
        t_skl_tma, t_gkl_tma = self.partition_latent_tma(tma_kl, g_kl_tma, s_kl, bi)
        t_skr_tma, t_gkr_tma = cpasync.tma_partition(
            tma_kr,
            0,
            cute.make_layout(1),
            cute.group_modes(s_kr, 0, 2),
            cute.group_modes(
                cute.local_tile(g_kr_tma[None, None, bi], (N_BLK, D_ROPE), (None, D_LAT // D_ROPE)),
                0,
                2,
            ),
        )
        return t_skl_tma, t_gkl_tma, t_skr_tma, t_gkr_tma

    def partition_latent_tma(
        self, tma_kl: cute.CopyAtom, g_kl_tma: cute.Tensor, s_kl: cute.Tensor, bi: cutlass.Int32
    ) -> tuple[Any, Any]:
        """Latent columns: ((tile), stage) in shared memory, ((tile), tile index) in global."""
        return cpasync.tma_partition(
            tma_kl,
            0,
            cute.make_layout(1),
            cute.group_modes(s_kl, 0, 2),
            cute.group_modes(
                cute.local_tile(g_kl_tma[None, None, bi], (N_BLK, D_LAT), (None, 0)), 0, 2
            ),
        )

    @cute.jit
    def wait_tile(
        self,
        s_full: cute.Pointer,
        stage: cutlass.Int32,
        step: cutlass.Int32,
        valid: cutlass.Int32,
        wg: cutlass.Int32,
        t_skl: cute.Tensor,
        t_ckv: cute.Tensor,
    ):
        """Top of step ``step``, before the CTA barrier: everyone waits for the whole tile;
        on the partial tile warpgroup 1 then zeroes V's rows past the sequence's end."""
        cute.arch.mbarrier_wait(s_full + stage, (step // STAGES) % 2)
        # the sequence ends inside this tile: zero V's rows past it
        if valid < N_BLK:  # noqa: SIM102 (nested: dynamic conditions)
            if wg == 1:
                self.zero_tail(t_skl, t_ckv, stage, valid)

    def slice_ready(self, s_full: cute.Pointer, stage: cutlass.Int32, step: cutlass.Int32) -> Any:
        """What the score product calls before each 64-column slice (see v7's
        ``score_softmax``): nothing here, the whole tile was waited for in :meth:`wait_tile`."""
        return None

    def wait_v(
        self, s_full: cute.Pointer, stage: cutlass.Int32, step: cutlass.Int32, wg: cutlass.Int32
    ) -> None:
        """Before P@V: nothing to wait for here (:meth:`wait_tile` waited for the tile)."""

    @cute.jit
    def tma_load_kv(
        self,
        tma_kl: cute.CopyAtom,
        tma_kr: cute.CopyAtom,
        t_gkl: cute.Tensor,
        t_skl: cute.Tensor,
        t_gkr: cute.Tensor,
        t_skr: cute.Tensor,
        s_full: cute.Pointer,
        tile: cutlass.Int32,
        stage: cutlass.Int32,
    ):
        """Called by all 32 lanes of one warp (converged): one elected lane arms ``s_full[stage]``
        for the whole tile's bytes, then copies KV tile ``tile`` (latent and rope columns) into
        ``stage``; rows >= t_max become 0. elect.sync elects the same lane each time, so the
        arrive comes before the copies in that lane's program order."""
        bar = s_full + stage
        with cute.arch.elect_one():
            cute.arch.mbarrier_arrive_and_expect_tx(
                bar, N_BLK * ref.D_QK * (t_skl.element_type.width // 8)
            )
        cute.copy(tma_kl, t_gkl[None, tile], t_skl[None, stage], tma_bar_ptr=bar)
        cute.copy(tma_kr, t_gkr[None, tile], t_skr[None, stage], tma_bar_ptr=bar)

    @cute.jit
    def zero_tail(
        self,
        t_skl: cute.Tensor,
        t_ckv: cute.Tensor,
        stage: cutlass.Int32,
        valid: cutlass.Int32,
    ):
        """Warpgroup 1 writes zeros over the latent columns of the stage's rows >= ``valid``
        (cache rows past the sequence's length: P = 0 there, but 0 * NaN is NaN)."""
        for n in cutlass.range_constexpr(cute.size(t_skl.shape[1])):
            if t_ckv[0, n, 0][0] >= valid:
                # swizzled shared tensors take no .fill(): store a zero register fragment
                zl = cute.make_rmem_tensor(t_skl[None, n, None, stage].shape, t_skl.element_type)
                zl.fill(0)
                store = cute.make_copy_atom(
                    cute.nvgpu.CopyUniversalOp(), t_skl.element_type, num_bits_per_copy=128
                )
                cute.copy(store, zl, t_skl[None, n, None, stage])


_HOST = VersionHost(VERSION, _MlaDecodeV11(), M_BLK, N_BLK, merge_in_kernel=True, packed=True)
entry = _HOST.entry
example_args = _HOST.example_args
mla_decode = _HOST.mla_decode
