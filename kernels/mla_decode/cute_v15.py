"""CuTe DSL MLA decode, version 15: cute_v7 with persistent CTAs walking a static, balanced
work list, and the next item's Q and first KV tile loaded before the current item's epilogue.

NOT YET RUN ON A GPU. It compiles for sm_90a on the CPU (its PTX is fingerprinted and checked
for its instructions and for where its loads sit; ptxas assembles it without spills, at one
CTA of 256 threads per SM); its correctness tests and its timing wait for the next GPU session.

**Per tile: cute_v7 unchanged.** Warpgroup 0 computes the 64x64 score tile and the online
softmax (:meth:`score_softmax`), warpgroup 1 issues the next KV tile's cp.async copies in that
window, both run P@V on their half of the 512 output columns (:meth:`rescale_pv`), two KV
stages; the partial store and the last-arriver merge are v7's (:meth:`store_partial`,
:meth:`merge_if_last`).

**Schedule** (:mod:`kernels.mla_decode.cute_schedule`). The grid is ``(row blocks, parts)``
with parts = ``SMs // row blocks``: at most one CTA per SM (the shared memory allows one), and
each CTA loops over the items of its part, ``(sequence, KV tile range, slot, pieces)``, for
its row block. The parts are cut from all sequences' KV tiles laid end to end, each at most
``ceil(batch * tiles / parts)`` tiles, so every CTA walks the same number of tiles; a cut inside
a sequence splits it into pieces. The list is built on the host once per shape (cached with the
scratch buffers, as cute_v9's launch plan) and read by the kernel from one int32 buffer; the
row blocks of a part walk the same list side by side, so each KV tile comes from DRAM once and
from L2 for the other row blocks, as in cute_v7's launch order. The cut uses the cache's
allocated length; each item is clipped to its sequence's length at run time (a ragged batch
leaves the CTAs of short sequences idle early, as in cute_v7).

**Partials and the merge.** A piece with ``pieces == 1`` (its sequence is whole in one part)
normalises and writes the final output rows directly. Otherwise it writes its fp32 partial
and LSE into slot ``slot`` of ``[b, rows, max pieces, 512]`` and counts itself in the arrival
counter of its (sequence, row block); the CTA that arrives ``pieces``-th merges that
sequence's ``pieces`` partials (v7's merge, given an LSE view with ``pieces`` slots) and resets
the counter. A CTA's items are a contiguous range of the tiles, so it holds at most one piece
of any (sequence, row block): each counter gets exactly ``pieces`` arrivals from ``pieces``
different CTAs, and no CTA ever waits for another (no deadlock with any residency). When no
sequence is split (``max pieces == 1``) the plan launches the compile whose ``o`` is q's dtype
and every item writes the output.

**Next item's prologue under the epilogue; shared memory.** v7's shared memory is 229,376
bytes of tiles (Q 73,728, two KV stages 147,456, P 8,192) plus about 0.5 KB of row factors and
the arrival flag: under 3 KB below the 232,448-byte limit, no room for a second Q or a third
KV stage. Both buffers
free up early anyway. The KV stage after the current item's last one is idle during its last
step, so at the top of that step warpgroup 1 issues the next item's first KV tile into it
(instead of the tile after the last, which does not exist). Q is read only by the score
products: once warpgroup 1 has passed the P-ready barrier of the last step, warpgroup 0's last
score product is complete, so warpgroup 1 issues the next item's Q right after its last P@V,
before the epilogue (row sums, the partial or output store, the arrival and maybe the merge),
which uses neither buffer. The next item's first step waits for both (cp.async groups, fence,
CTA barrier), as every step does. A stage parity carried across items keeps the two stages
alternating; an item clipped to nothing (sequence shorter than its start) falls back to
loading its successor's first tile at the successor's start.

**Prediction** (H200, 132 SMs; cute_v7 measured 84.4 us decode, 1083 us speculative, issue 14).
- decode (b=32, s=1, t=4096): 2 row blocks x 64 tiles per sequence; parts = 132 // 2 = 66,
  budget ceil(32 * 64 / 66) = 32 tiles, so 64 parts: 128 CTAs, one item of 32 tiles each, two
  pieces per sequence -- the same CTAs, tiles and merges as cute_v7 (pick_splits gives 2 splits
  of 32 on 128 CTAs). Expected: cute_v7's time within +-2% (the item loop's few instructions
  and one more barrier per item); no balance gain is possible here, ceil(4096 / 132) = 32 is
  already what every v7 CTA walks.
- speculative (b=32, s=16, t=4096): 32 row blocks; parts = 132 // 32 = 4, budget 32 * 64 / 4 =
  512 tiles: 128 CTAs, each 8 whole sequences (8 items, no splits, direct output). cute_v7
  runs 1024 CTAs of 64 tiles, one per SM, in ceil(1024 / 132) = 8 waves: also 512 tiles on the
  critical path. What changes is the 7 prologues per SM (Q 72 KB + the first KV tile) that v7
  pays between its CTAs and v15 hides under the previous item's epilogue, and the CTA launch
  and drain between waves. At ~2.1 us per tile step (1083 us / 512), hiding ~1-2 us per
  item boundary is 7-14 us: expected 1070-1080 us, 0.3-1.3% faster -- inside run-to-run noise
  unless the profile shows the between-CTA gaps are larger. The balance itself gains nothing at
  these shapes: the lockstep row blocks (for L2) leave 4 of the 132 SMs idle, exactly as the
  last wave of cute_v7 leaves 32 idle for the same 512-tile critical path. Reaching the
  ceil(65536 / 132) = 497-tile optimum (-3%) needs row blocks cut across parts too, which costs
  a fp32 partial and a merge per split (row block, sequence): not done here.
"""

from dataclasses import dataclass
from typing import Any

import cuda.bindings.driver as cuda
import cutlass
import cutlass.cute as cute
import cutlass.utils
import torch
from cutlass.cute.nvgpu import warpgroup

from kernels.mla_decode import cute_common
from kernels.mla_decode import reference as ref
from kernels.mla_decode.cute_common import (
    VersionHost,
    cta_gmem_tiles,
    g2s_tiled_copy,
    mla_counters_tensor,
    mla_global_tensors,
    mla_out_tensor,
    mla_smem_layouts,
    mla_smem_tensors,
    mn_view,
    softmax_state,
    wgmma_smem_operands,
    wgmma_tiled,
)
from kernels.mla_decode.cute_schedule import ITEM_WORDS, PIECES_SHIFT, WorkList, balanced_work
from kernels.mla_decode.cute_v2 import D_LAT, M_BLK, N_BLK, STAGES, THREADS, WG_THREADS
from kernels.mla_decode.cute_v7 import _MlaDecodeV7

VERSION = "cute_v15"
DESCRIPTION = (
    "CuTe DSL: cute_v7 on a persistent grid (at most one CTA per SM) walking a static list of "
    "(sequence, KV range) items balanced to the same tile count per CTA, the next item's Q and "
    "first KV tile loaded under the current item's epilogue"
)


class _MlaDecodeV15(_MlaDecodeV7):
    """v7's per-tile methods and epilogue pieces, a new entry (one more pointer: the work
    list; the grid from the plan) and a persistent kernel."""

    def __init__(self) -> None:
        super().__init__(l2_prefetch_distance=0)

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
        p_work: cute.Pointer,
        batch: cutlass.Int32,
        rows: cutlass.Int32,
        t_max: cutlass.Int32,
        max_pieces: cutlass.Int32,
        parts: cutlass.Int32,
        scale_log2: cutlass.Float32,
        stream: cuda.CUstream,
    ):
        dtype = p_q.dtype
        m_q, m_kv, m_lens, m_o, m_lse = mla_global_tensors(
            p_q, p_kv, p_lens, p_o, p_lse, batch, rows, t_max, max_pieces
        )
        layouts = mla_smem_layouts(dtype, M_BLK, N_BLK, STAGES)
        s_ql_layout, s_qr_layout, s_kl_layout, s_kr_layout, _, s_p_layout = layouts
        SharedStorage = self.shared_storage(
            dtype, s_ql_layout, s_qr_layout, s_kl_layout, s_kr_layout, s_p_layout
        )
        g2s = g2s_tiled_copy(dtype, WG_THREADS)  # warpgroup 1 loads
        mma_qk = self.score_mma(dtype)
        mma_pv = wgmma_tiled(
            dtype,
            M_BLK,
            D_LAT // 2,
            warpgroup.OperandSource.SMEM,
            warpgroup.OperandMajorMode.MN,
            atoms_n=2,
        )
        m_out = mla_out_tensor(p_out, batch, rows)
        # the output as a one-slot "partial" [b, 1, rows, 512]: whole sequences store here
        m_out_slot = cute.make_tensor(
            p_out,
            cute.make_layout(
                (batch, 1, rows, ref.D_V),
                stride=(cute.assume(rows * ref.D_V, divby=64), ref.D_V, ref.D_V, 1),
            ),
        )
        m_sem = mla_counters_tensor(p_sem, batch, rows, M_BLK)
        items_off = (parts + ITEM_WORDS) // ITEM_WORDS * ITEM_WORDS  # offsets, 16-byte padded
        m_work = cute.make_tensor(
            p_work, cute.make_layout((items_off + ITEM_WORDS * (parts + batch),))
        )
        self.kernel(
            m_q, m_kv, m_lens, m_o, m_lse, m_out, m_out_slot, m_sem, m_work, items_off,
            scale_log2, *layouts, g2s, mma_qk, mma_pv, SharedStorage,
        ).launch(
            grid=(rows // M_BLK, parts, 1),
            block=[THREADS, 1, 1],
            smem=SharedStorage.size_in_bytes(),
            stream=stream,
        )  # fmt: skip

    @cute.kernel
    def kernel(
        self,
        m_q: cute.Tensor,
        m_kv: cute.Tensor,
        m_lens: cute.Tensor,
        m_o: cute.Tensor,
        m_lse: cute.Tensor,
        m_out: cute.Tensor,
        m_out_slot: cute.Tensor,
        m_sem: cute.Tensor,
        m_work: cute.Tensor,
        items_off: cutlass.Int32,
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
        m_block, part, _ = cute.arch.block_idx()
        dtype = m_q.element_type
        wg = tidx // WG_THREADS
        wg_tidx = tidx % WG_THREADS
        it_begin = m_work[part]
        it_end = m_work[part + 1]

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
        t_sql = thr_g2s.partition_D(s_ql)
        t_sqr = thr_g2s.partition_D(s_qr)
        t_skl = thr_g2s.partition_D(s_kl)
        t_skr = thr_g2s.partition_D(s_kr)
        t_ckv = thr_g2s.partition_S(cute.make_identity_tensor((N_BLK, ref.D_LATENT)))

        thr_qk = mma_qk.get_slice(wg_tidx)
        thr_pv = mma_pv.get_slice(tidx)
        t_aql, t_aqr, t_bkl, t_bkr, t_bv = wgmma_smem_operands(
            mma_qk, thr_qk, mma_pv, thr_pv, s_ql, s_qr, s_kl, s_kr, s_vt
        )
        t_ap = mma_pv.make_fragment_A(thr_pv.partition_A(s_p))  # (MMA, M, K)
        t_sp = thr_qk.partition_C(s_p)
        p_store = cute.make_copy_atom(cute.nvgpu.CopyUniversalOp(), dtype, num_bits_per_copy=32)
        acc_o = cute.make_rmem_tensor(thr_pv.partition_shape_C((M_BLK, D_LAT)), cutlass.Float32)
        acc_o_mn = mn_view(acc_o)
        t_cs = mn_view(thr_qk.partition_C(cute.make_identity_tensor((M_BLK, N_BLK))))
        lane = cute.arch.lane_idx()
        _, row_max, row_sum = softmax_state(acc_o_mn)

        # the first item's Q; its first KV tile is issued at the top of the item loop
        if it_begin < it_end:  # noqa: SIM102 (nested: dynamic conditions)
            if wg == 1:
                seq0, _, _, _, _ = _read_item(m_work, items_off, it_begin)
                self.load_q(g2s, m_q, m_kv, thr_g2s, t_sql, t_sqr, seq0, m_block)
        cute.arch.cp_async_commit_group()

        stage0 = cutlass.Int32(0)  # the stage of this item's first KV tile
        kv_issued = cutlass.Int32(0)  # 1: the previous item already issued that tile
        for it in range(it_begin, it_end):
            seq, tile_begin, tile_end, slot, pieces = _read_item(m_work, items_off, it)
            seqlen, n_steps = _clip(m_lens, seq, tile_begin, tile_end)
            # the next item (this one again when it is the last: then nothing is prefetched)
            nxt = cutlass.min(it + 1, it_end - 1)
            n_seq, n_begin, n_end, _, _ = _read_item(m_work, items_off, nxt)
            n_seqlen, n_nsteps = _clip(m_lens, n_seq, n_begin, n_end)
            prefetch = cutlass.Int32(0)
            if it + 1 < it_end:  # noqa: SIM102
                if n_nsteps > 0:
                    prefetch = cutlass.Int32(1)
            _, _, g_kl, g_kr = cta_gmem_tiles(m_q, m_kv, seq, m_block, M_BLK, N_BLK)
            t_gkl = thr_g2s.partition_S(g_kl)
            t_gkr = thr_g2s.partition_S(g_kr)
            _, _, n_gkl, n_gkr = cta_gmem_tiles(m_q, m_kv, n_seq, m_block, M_BLK, N_BLK)
            t_ngkl = thr_g2s.partition_S(n_gkl)
            t_ngkr = thr_g2s.partition_S(n_gkr)

            if n_steps <= 0:
                # nothing to compute: keep the epilogue's shared row sums apart from the
                # previous item's (no step barrier runs in between)
                cute.arch.sync_threads()
            if kv_issued == 0:  # noqa: SIM102
                if n_steps > 0:  # noqa: SIM102
                    if wg == 1:
                        self.load_kv(
                            g2s, t_gkl, t_skl, t_gkr, t_skr, t_ckv, tile_begin, stage0, seqlen
                        )
            cute.arch.cp_async_commit_group()

            acc_o.fill(0.0)
            row_max.fill(-cutlass.Float32.inf)
            row_sum.fill(0.0)
            for step in range(n_steps):
                tile = tile_begin + step
                stage = (stage0 + step) % STAGES
                cute.arch.cp_async_wait_group(0)  # warpgroup 1's copies
                cute.arch.fence_view_async_shared()
                cute.arch.sync_threads()
                if wg == 1:
                    if step + 1 < n_steps:
                        self.load_kv(
                            g2s, t_gkl, t_skl, t_gkr, t_skr, t_ckv, tile + 1,
                            (stage + 1) % STAGES, seqlen,
                        )  # fmt: skip
                    else:
                        # the last step: the other stage takes the next item's first tile
                        if prefetch == 1:
                            self.load_kv(
                                g2s, t_ngkl, t_skl, t_ngkr, t_skr, t_ckv, n_begin,
                                (stage + 1) % STAGES, n_seqlen,
                            )  # fmt: skip
                cute.arch.cp_async_commit_group()
                if wg == 0:
                    self.score_softmax(
                        mma_qk, thr_qk, t_aql, t_aqr, t_bkl, t_bkr, t_sp, p_store, t_cs,
                        acc_o_mn, row_max, row_sum, s_corr, stage, seqlen, tile, scale_log2, lane,
                    )  # fmt: skip
                self.rescale_pv(mma_pv, t_ap, t_bv, t_cs, acc_o, acc_o_mn, s_corr, stage, wg)

            # the next item's Q: warpgroup 0's score products of this item are complete
            # (warpgroup 1 passed the last P-ready barrier), the epilogue does not read Q
            if it + 1 < it_end:  # noqa: SIM102
                if wg == 1:
                    if n_steps <= 0:
                        cute.arch.cp_async_wait_group(0)  # this item's unread Q is in flight
                    self.load_q(g2s, m_q, m_kv, thr_g2s, t_sql, t_sqr, n_seq, m_block)
            cute.arch.cp_async_commit_group()

            self.finish_item(
                m_o, m_lse, m_out, m_out_slot, m_sem, s_sum, s_arrived, thr_pv, t_cs, acc_o,
                acc_o_mn, row_max, row_sum, scale_log2, m_block, slot, pieces, seq, tidx, wg,
                lane,
            )  # fmt: skip

            kv_issued = cutlass.Int32(0)
            if n_steps > 0:
                stage0 = (stage0 + n_steps) % STAGES
                kv_issued = prefetch
        # a last item clipped to nothing leaves its Q copies unread: none outlives the CTA
        cute.arch.cp_async_wait_group(0)

    @cute.jit
    def load_q(
        self,
        g2s: cute.TiledCopy,
        m_q: cute.Tensor,
        m_kv: cute.Tensor,
        thr_g2s: Any,
        t_sql: cute.Tensor,
        t_sqr: cute.Tensor,
        seq: cutlass.Int32,
        m_block: cutlass.Int32,
    ):
        """cp.async the 64 query rows of (``seq``, ``m_block``) into the Q buffer."""
        g_ql, g_qr, _, _ = cta_gmem_tiles(m_q, m_kv, seq, m_block, M_BLK, N_BLK)
        cute.copy(g2s, thr_g2s.partition_S(g_ql), t_sql)
        cute.copy(g2s, thr_g2s.partition_S(g_qr), t_sqr)

    @cute.jit
    def finish_item(
        self,
        m_o: cute.Tensor,
        m_lse: cute.Tensor,
        m_out: cute.Tensor,
        m_out_slot: cute.Tensor,
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
        slot: cutlass.Int32,
        pieces: cutlass.Int32,
        seq: cutlass.Int32,
        tidx: cutlass.Int32,
        wg: cutlass.Int32,
        lane: cutlass.Int32,
    ):
        """A whole sequence writes its output rows; a piece writes its partial into its slot,
        arrives, and the ``pieces``-th arriver merges (v7's merge over ``pieces`` slots)."""
        if cutlass.const_expr(m_o.element_type == cutlass.Float32):
            if pieces == 1:
                self.store_partial(
                    m_out_slot, m_lse, s_sum, thr_pv, t_cs, acc_o, acc_o_mn, row_max, row_sum,
                    scale_log2, m_block, 0, seq, tidx, wg, lane,
                )  # fmt: skip
            else:
                self.store_partial(
                    m_o, m_lse, s_sum, thr_pv, t_cs, acc_o, acc_o_mn, row_max, row_sum,
                    scale_log2, m_block, slot, seq, tidx, wg, lane,
                )  # fmt: skip
                lse_pieces = cute.make_tensor(
                    m_lse.iterator,
                    cute.make_layout(
                        (m_lse.shape[0], pieces, m_lse.shape[2]), stride=m_lse.layout.stride
                    ),
                )
                self.merge_if_last(m_o, lse_pieces, m_out, m_sem, s_arrived, m_block, seq)
        else:  # no sequence is split: o is the output itself
            self.store_partial(
                m_o, m_lse, s_sum, thr_pv, t_cs, acc_o, acc_o_mn, row_max, row_sum,
                scale_log2, m_block, 0, seq, tidx, wg, lane,
            )  # fmt: skip


def _read_item(m_work: Any, items_off: Any, it: Any) -> tuple[Any, Any, Any, Any, Any]:
    """``(seq, tile_begin, tile_end, slot, pieces)`` of item ``it`` (traced inline)."""
    base = items_off + it * ITEM_WORDS
    seq, begin, end, packed = (m_work[base + k] for k in range(ITEM_WORDS))
    return seq, begin, end, packed % PIECES_SHIFT, packed // PIECES_SHIFT


def _clip(m_lens: Any, seq: Any, tile_begin: Any, tile_end: Any) -> tuple[Any, Any]:
    """``(seqlen, n_steps)``: the item's tiles that hold keys of its sequence (``n_steps`` may
    be 0 or less: the sequence ends before the item starts)."""
    seqlen = m_lens[seq]
    n_tiles = (seqlen + (N_BLK - 1)) // N_BLK
    return seqlen, cutlass.min(tile_end, n_tiles) - tile_begin


# ---------------------------------------------------------------------------------------------
# Host: a launch plan per shape (the work list, scratch, counters, packed arguments).
# ---------------------------------------------------------------------------------------------


def sm_count(device: torch.device) -> int:
    """The SMs the work list is cut for (a function, so tests can shrink it)."""
    return cute_common.num_sms(device)


@dataclass
class _Plan:
    work: WorkList
    launch: cute_common.PackedLaunch
    in_dt: Any
    out_dt: Any
    ints: list[int]
    words: torch.Tensor  # the work list, int32 on the device
    partials: torch.Tensor | None  # fp32 [b, rows, max pieces, 512] when a sequence is split
    lse: torch.Tensor
    counters: torch.Tensor
    stream: Any
    info: dict[str, int | str]


_PLANS: dict[tuple[Any, ...], _Plan] = {}
# The work list on the device, per (batch, rows, KV length, SMs, device): shared by the
# plans of every stream.  A plan is per stream, and CUDA-graph capture runs on a stream of
# its own, where a plain host-to-device copy is refused; the list is built on the first
# eager call, and only a capture that comes first copies it from pinned memory (kept
# alive beside it, since the captured copy reads that buffer again on each replay).
_WORDS: dict[tuple[Any, ...], tuple[torch.Tensor, torch.Tensor | None]] = {}


def _work_words(work: WorkList, key: tuple[Any, ...], device: torch.device) -> torch.Tensor:
    cached = _WORDS.get(key)
    if cached is None:
        host = torch.tensor(work.words(), dtype=torch.int32)
        if torch.cuda.is_current_stream_capturing():
            host = host.pin_memory()
            cached = (host.to(device, non_blocking=True), host)
        else:
            cached = (host.to(device), None)
        _WORDS[key] = cached
    return cached[0]


class _PersistentHost(VersionHost):
    """v7's host contract with v15's entry: one more pointer (the work list, after the
    counters), and a launch plan per (shapes, dtype, device, stream, SMs)."""

    def example_args(self, in_dtype: Any = None, out_dtype: Any = None) -> tuple[Any, ...]:
        args = super().example_args(in_dtype, out_dtype)
        work = cute_common._gmem_ptr(cutlass.Int32, 1 << 20, 16)
        return (*args[:7], work, *args[7:])

    def plan(self, q: torch.Tensor, t_max: int, stream_handle: int) -> _Plan:
        rows = cute_common.check_query(self.version, q, M_BLK)
        b = q.shape[0]
        sms = sm_count(q.device)
        key = (self.version, q.shape, q.dtype, t_max, q.device, stream_handle, sms)
        plan = _PLANS.get(key)
        if plan is not None:
            return plan
        work = balanced_work(b, rows // M_BLK, -(-t_max // N_BLK), sms)
        pieces = work.max_pieces
        in_dt = getattr(cutlass, cute_common._TORCH_TO_CUTE[q.dtype])
        out_dt = in_dt if pieces == 1 else cutlass.Float32
        fn = self.compiled(in_dt, out_dt)
        info: dict[str, int | str] = {
            "splits": pieces,
            "tiles_per_split": work.tiles_per_part,
            "kernels": 1,
            "parts": work.parts,
            "ctas": work.parts * rows // M_BLK,
            "items": len(work.items),
        }
        sha = cute_common.launched_ptx_sha256(fn)
        if sha is not None:
            info["ptx_sha256"] = sha
        dev = q.device
        plan = _Plan(
            work=work,
            launch=cute_common.PackedLaunch(fn),
            in_dt=in_dt,
            out_dt=out_dt,
            ints=[b, rows, t_max, pieces, work.parts],
            words=_work_words(work, (b, rows, t_max, sms, dev), dev),
            partials=None
            if pieces == 1
            else torch.empty(b, rows, pieces, ref.D_V, dtype=torch.float32, device=dev),
            lse=torch.empty(b, rows, pieces, dtype=torch.float32, device=dev),
            counters=torch.zeros(b * rows // M_BLK, dtype=torch.int32, device=dev),
            stream=cuda.CUstream(stream_handle),
            info=info,
        )
        _PLANS[key] = plan
        return plan

    def mla_decode(
        self, q: torch.Tensor, kv_cache: torch.Tensor, cache_seqlens: torch.Tensor, sm_scale: float
    ) -> torch.Tensor:
        ref.check_inputs(q, kv_cache, cache_seqlens)
        cute_common.check_query(self.version, q, M_BLK)  # dtype, device, rows
        stream_handle = torch.cuda.current_stream(q.device).cuda_stream
        plan = self.plan(q, kv_cache.shape[1], stream_handle)
        if not q.is_contiguous():
            q = q.contiguous()
        if not kv_cache.is_contiguous():
            kv_cache = kv_cache.contiguous()
        lens = cache_seqlens
        if lens.dtype != torch.int32 or lens.device != q.device or not lens.is_contiguous():
            lens = lens.to(device=q.device, dtype=torch.int32).contiguous()
        b, s, h, _ = q.shape
        out = torch.empty(b, s, h, ref.D_V, dtype=q.dtype, device=q.device)
        o = out if plan.partials is None else plan.partials
        addrs = [
            q.data_ptr(),
            kv_cache.data_ptr(),
            lens.data_ptr(),
            o.data_ptr(),
            plan.lse.data_ptr(),
            out.data_ptr(),
            plan.counters.data_ptr(),
            plan.words.data_ptr(),
        ]
        scale_log2 = float(sm_scale) * cute_common.LOG2_E
        cute_common.LAST_INFO.clear()
        cute_common.LAST_INFO.update(plan.info)

        def cute_args() -> tuple[Any, ...]:  # CuTe DSL's own conversion, checked on first call
            ptr = cute_common._gmem_ptr
            types = [plan.in_dt, plan.in_dt, cutlass.Int32, plan.out_dt, cutlass.Float32]
            types += [plan.in_dt, cutlass.Int32, cutlass.Int32]
            aligns = [16, 16, 4, 16, 4, 16, 4, 16]
            return (
                *(ptr(t, a, al) for t, a, al in zip(types, addrs, aligns, strict=True)),
                *plan.ints,
                scale_log2,
                plan.stream,
            )

        plan.launch(addrs, plan.ints, scale_log2, plan.stream, cute_args)
        return out


_HOST = _PersistentHost(VERSION, _MlaDecodeV15(), M_BLK, N_BLK, merge_in_kernel=True, planned=True)
entry = _HOST.entry
example_args = _HOST.example_args
mla_decode = _HOST.mla_decode
