"""CuTe DSL MLA decode, version 26: cute_v25 with the split merge done from registers by the
last CTA of each split pair: it takes its turn before it stores anything, keeps its own O
in registers, and reads only the other splits' partials.

**Why.** cute_v25's decode warp-stall samples (b=32, s=1, t=4096, one H100:
``stall-source-20261206T1511Z-NVIDIA-H100-80GB-HBM3-cute_v25-decode.csv.gz``, 8,705
samples) split at the same SASS rows as cute_v24's of ``20261206T1428Z`` (the PTX is
cute_v24's up to the merge's ``atom``, so the SASS rows are too: the ``ATOMG`` at row 5,027,
kernel offset 0x13a30, in both files; rows in address order, read with the CSV module):
partial stores (row 4,871, the first ``STG.E.64``, to the CTA barrier before the fence) 377
samples (cute_v24 358), hand-shake (that barrier, fence + ``ATOMG`` + fence, the second
barrier and the ``LDC`` behind it, where 184 samples wait: cute_v24 160) 244 (241), merge
(the rest) 417 (890). These boundaries start the store region at its first store, so they
give cute_v24 358 / 241 / 890 where the devlog's table, which starts at the row sums, has
402 / 258 / 885. Per merging CTA (stores and hand-shake / 128 CTAs, merge / 64: derived):
2.9 + 1.9 + 6.5 = 11.4 samples after the last tile, against FlashMLA's main kernel 3.5 in its
epilogue (devlog table). Of the three choices the brief lists, the one that takes most off
the merging CTA without a new launch path is the merge from registers: it removes that CTA's
own partial store (2.9), the drain of those 64 stores per thread that its fence waits for
inside the hand-shake, and the re-read of its own partial, half the merge's L2 reads
(128 of 256 KB per merging CTA; derived: 64 rows x 512 fp32 = 128 KB a split). A hand-over without the
CTA-wide wait (b) is bounded by the hand-shake's 1.9. A 2-CTA cluster (a) would also drop
the other CTA's global store and all L2 reads, but needs a cluster launch in our packed
launch path, a second compile with the cluster shape fixed at 2 splits (the plan launches up
to 16: the fingerprint test's b=2, t=1000 runs 16), 128 KB of fp32 partial in a shared memory
that is full (~225 KB: cute_v13's doc) and DSMEM barriers, none of which can be run here.

**The change.** ``store_and_merge`` (cute_v13's end of the kernel, made a method for this
version without changing any earlier PTX) replaced at fp32 partials; everything up to the
normalised O and LSE in registers is cute_v25's. The per-(sequence, row block) counter keeps
arrivals in its low 16 bits and published partials above (``PUBLISHED`` = 65,536). Thread 0
takes the CTA's turn first, before any store: ``atom.add`` 1 (relaxed, nothing to release
yet), its old value to shared memory; if it is the last arrival it polls (``atom.add`` 0 in a
loop) until every other split has published, usually at once (the value the ``atom`` returned
already says so), then ``fence.acq_rel.gpu``; CTA barrier. An earlier arriver stores its fp32
partial and LSE exactly as cute_v25 does (64 ``st.global.v2.f32`` per thread, 2 LSEs), then
CTA barrier, thread 0's fence and ``atom.add`` ``PUBLISHED``, and exits. The last arriver
fences (every thread, as cute_v25's) and merges in the P@V accumulator layout its threads
already hold (2 rows x 64 columns a thread): ``top`` = max of its own LSE and the others'
(2 scalar loads a split); its O times ``2^(lse - top)`` in place; per other split, each of the
2 rows' 64 columns loaded as 32 ``ld.global.v2.f32`` in the layout the other CTA stored them
in, added with ``w = 2^(lse_sp - top)``, ``den += w``; then ``acc * rcp(den)`` to bf16 and
stored as the one-split kernel stores its output (64 ``st.global.b32`` of bf16 pairs); thread
0 sets the counter to 0. The last arriver waits only for CTAs that already took their turn,
which need nothing more to finish: no co-residency assumption, no cluster. Arithmetic: the
same weights and ``rcp``, summed with the merging CTA's own split first (cute_v25 sums in
split order): the output may differ from cute_v25's in the last bits. The one-split kernel
(bf16 output: speculative, b=128) is cute_v25's.

**Checked on the CPU.** bf16 output: the PTX is cute_v25's but for the kernel name. fp32
partials: up to the first ``atom`` the same instructions as cute_v25's up to its first store
but for ~20 integer ones (LLVM's address arithmetic; 7,216 against 7,226 lines, the same 144
m64n64 ``wgmma``, 36 TMA copies, 11 ``bar.sync``, 70 ``ex2``); no global store before the
turn; three ``atom.add`` (1, 0 in a loop, 65,536), three fences; the publishing ``atom``
after the 66 partial stores, a CTA barrier and a fence; the merge's loads in two loop bodies
(2 LSEs; 64 ``ld.global.v2.f32`` and 2 LSEs), none at an address loaded in its loop, and the
64 output stores after the last of them (a test reads all of this). Cubin (``cuobjdump
-res-usage`` and ``nvdisasm`` from the venv's Triton package): 253 registers against 238, no
stack, no local memory; SASS 6,176 instructions against 6,224, the first ``ATOMG`` at 4,850
against 5,028; the main loop's last ``HGMMA`` at 4,670 against 4,668, and of the first 4,800
opcodes 336 lines differ, mostly ``IMAD.U32``/``MOV``-like equivalents of another register
allocation; the last arriver's path from its fence to its exit is 712 SASS instructions
(cute_v25's merge: 1,196 from its atomic to its end), an earlier arriver's stores and publish
186. Earlier versions' PTX unchanged (``python -m kernels.mla_decode.ptx_fingerprints
--check``).

**Prediction** (per call, same run). Decode (b=32, s=1, t=4096: 2 splits): the merging CTA's
samples after the last tile from ~11.4 to ~4-5.5 (its turn ~1 without the drain, the merge
~3-4.5 with half the loads in 3 round trips
and ~60% of the code), i.e. -6 to -7.5 of its ~72.4 (79.7 for
cute_v24 less the merge's 13.8 -> 6.5: derived); only -2 to -3 where the pair's two CTAs
finish together and the last polls for the other's store. Against cute_v25: -3% to -9% in
time. Against cute_v24: -6% to -18% (89.3 us on the H100 of ``20261206T142746Z`` -> 73-84 us;
FlashMLA 83.6 us there; cute_v25 is not timed yet). In decode stall samples the rows from the
first ``ATOMG`` to the exit at 3-6% of the kernel's and the poll under ~2 per merging CTA.
Speculative (b=32, s=16) and b=128 (s=2): one split, the bf16 kernel is cute_v25's (and
cute_v24's) PTX: -1% to +1% against both. What would show it wrong: decode within +-1.5% of
cute_v25 (the tail is not on the critical path as read, or the pairs finish together and the
poll takes what the store gave back), or the main loop's samples per CTA up against cute_v25's
(the 253 registers costing the loop).
"""

from typing import Any

import cutlass
import cutlass.cute as cute
import cutlass.utils.distributed as distributed

from kernels.mla_decode.cute_common import VersionHost, mn_view
from kernels.mla_decode.cute_v10 import D_HALF, M_BLK, N_BLK, WG_THREADS
from kernels.mla_decode.cute_v25 import _MlaDecodeV25

VERSION = "cute_v26"
DESCRIPTION = (
    "CuTe DSL: cute_v25 with the split merge from registers: the split pair's CTAs take "
    "their turn before storing, the last keeps its O in registers and reads only the other "
    "split's partial (no partial store of its own, no re-read of it)"
)

__all__ = ["DESCRIPTION", "VERSION", "entry", "example_args", "mla_decode"]

# the per-(sequence, row block) counter: arrivals in the low 16 bits, published partials above
PUBLISHED = 1 << 16
ARRIVALS_MASK = PUBLISHED - 1


class _MlaDecodeV26(_MlaDecodeV25):
    """cute_v25's kernel with :meth:`store_and_merge` replaced at fp32 partials (module doc);
    the one-split kernel (bf16 output) is cute_v25's."""

    @cute.jit
    def store_and_merge(
        self,
        m_o: cute.Tensor,
        m_lse: cute.Tensor,
        m_out: cute.Tensor,
        m_sem: cute.Tensor,
        s_arrived: cute.Tensor,
        m_block: cutlass.Int32,
        split: cutlass.Int32,
        bi: cutlass.Int32,
        acc_o: cute.Tensor,
        lse: cute.Tensor,
        thr_pv_rs: Any,
        t_cs: cute.Tensor,
        s_q: cute.Tensor,
    ):
        """Arrive first (one relaxed ``atom.add`` of 1, nothing to release yet); an earlier
        arriver stores its partial and LSE as before and then publishes them (CTA barrier,
        fence, ``atom.add`` of ``PUBLISHED``); the last arriver waits until every other split
        has published, then merges its registers with their partials and stores the output."""
        if cutlass.const_expr(m_o.element_type != cutlass.Float32):
            # one split: the output itself, as cute_v13 to cute_v25
            _MlaDecodeV25.store_and_merge(
                self,
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
                s_q,
            )
        else:
            tidx, _, _ = cute.arch.thread_idx()
            wg = tidx // WG_THREADS
            lane = cute.arch.lane_idx()
            n_rows = cute.size(t_cs, mode=[0])
            splits = m_lse.shape[1]
            counter = m_sem.iterator + (bi * m_sem.shape[1] + m_block)
            if tidx == 0:
                arrived = distributed.atomicAdd(counter, cutlass.Int32(1))
                s_arrived[0] = arrived
                if (arrived & ARRIVALS_MASK) == splits - 1:
                    # last: every other split has arrived; wait until all have published
                    everyone = splits + (splits - 1) * PUBLISHED
                    seen = arrived + 1
                    while seen != everyone:
                        seen = distributed.atomicAdd(counter, cutlass.Int32(0))
                    cute.arch.fence_acq_rel_gpu()
            cute.arch.sync_threads()
            if (s_arrived[0] & ARRIVALS_MASK) != splits - 1:
                # an earlier arriver: cute_v25's partial and LSE stores, then publish them
                g_o = cute.local_tile(m_o[bi, split, None, None], (M_BLK, D_HALF), (m_block, wg))
                r_o = cute.make_rmem_tensor_like(acc_o, m_o.element_type)
                r_o.store(acc_o.load())
                cute.autovec_copy(r_o, thr_pv_rs.partition_C(g_o))
                if tidx < WG_THREADS and lane % 4 == 0:
                    for r in cutlass.range_constexpr(n_rows):
                        m_lse[bi, split, m_block * M_BLK + t_cs[r, 0][0]] = lse[r]
                cute.arch.sync_threads()
                if tidx == 0:
                    cute.arch.fence_acq_rel_gpu()
                    distributed.atomicAdd(counter, cutlass.Int32(PUBLISHED))
            else:
                cute.arch.fence_acq_rel_gpu()
                self.merge_from_registers(
                    m_o, m_lse, m_out, m_block, split, bi, acc_o, lse, thr_pv_rs, t_cs, s_q
                )
                if tidx == 0:
                    m_sem[bi, m_block] = 0  # ready for the next call

    @cute.jit
    def merge_from_registers(
        self,
        m_o: cute.Tensor,
        m_lse: cute.Tensor,
        m_out: cute.Tensor,
        m_block: cutlass.Int32,
        split: cutlass.Int32,
        bi: cutlass.Int32,
        acc_o: cute.Tensor,
        lse: cute.Tensor,
        thr_pv_rs: Any,
        t_cs: cute.Tensor,
        s_q: cute.Tensor,
    ):
        """The last arriver's merge, in the P@V accumulator layout each thread already holds
        (its 2 rows x 64 columns of its warpgroup's 256): ``top`` = max of the LSEs, this
        split's O weighted by ``2^(lse - top)`` in place, each other split's partial rows
        loaded in the same layout (64-bit pairs) and added with its weight, then
        ``acc * rcp(den)`` to the output's dtype and stored as the one-split kernel stores.
        ``s_q``: the idle latent Q tile, passed on to :meth:`store_merged`."""
        tidx, _, _ = cute.arch.thread_idx()
        wg = tidx // WG_THREADS
        n_rows = cute.size(t_cs, mode=[0])
        splits = m_lse.shape[1]
        acc_o_mn = mn_view(acc_o)
        top = cute.make_rmem_tensor((n_rows,), cutlass.Float32)
        den = cute.make_rmem_tensor((n_rows,), cutlass.Float32)
        for r in cutlass.range_constexpr(n_rows):
            top[r] = lse[r]
        for sp in cutlass.range(splits, unroll=1):
            if sp != split:
                for r in cutlass.range_constexpr(n_rows):
                    row = m_block * M_BLK + t_cs[r, 0][0]
                    top[r] = cute.arch.fmax(top[r], m_lse[bi, sp, row])
        for r in cutlass.range_constexpr(n_rows):
            w = cute.math.exp2(lse[r] - top[r], fastmath=True)
            den[r] = w
            acc_o_mn[r, None].store(acc_o_mn[r, None].load() * w)
        part = cute.make_rmem_tensor_like(acc_o_mn[0, None], cutlass.Float32)
        for sp in cutlass.range(splits, unroll=1):
            if sp != split:
                g_p = cute.local_tile(m_o[bi, sp, None, None], (M_BLK, D_HALF), (m_block, wg))
                t_p = mn_view(thr_pv_rs.partition_C(g_p))
                for r in cutlass.range_constexpr(n_rows):
                    row = m_block * M_BLK + t_cs[r, 0][0]
                    cute.autovec_copy(t_p[r, None], part)
                    w = cute.math.exp2(m_lse[bi, sp, row] - top[r], fastmath=True)
                    den[r] = den[r] + w
                    acc_o_mn[r, None].store(acc_o_mn[r, None].load() + part.load() * w)
        for r in cutlass.range_constexpr(n_rows):
            acc_o_mn[r, None].store(acc_o_mn[r, None].load() * cute.arch.rcp_approx(den[r]))
        self.store_merged(m_out, m_block, bi, acc_o, thr_pv_rs, s_q)

    @cute.jit
    def store_merged(
        self,
        m_out: cute.Tensor,
        m_block: cutlass.Int32,
        bi: cutlass.Int32,
        acc_o: cute.Tensor,
        thr_pv_rs: Any,
        s_q: cute.Tensor,
    ):
        """The merged, normalised O to the output's dtype and stored from the accumulator
        layout, as the one-split kernel stores (64 ``st.global.b32`` of bf16 pairs a thread);
        ``s_q`` unused (cute_v27 replaces this method). Traced inline: the same PTX as with
        the code written out in :meth:`merge_from_registers`."""
        tidx, _, _ = cute.arch.thread_idx()
        wg = tidx // WG_THREADS
        g_out = cute.local_tile(m_out[bi, None, None], (M_BLK, D_HALF), (m_block, wg))
        r_out = cute.make_rmem_tensor_like(acc_o, m_out.element_type)
        r_out.store(acc_o.load().to(m_out.element_type))
        cute.autovec_copy(r_out, thr_pv_rs.partition_C(g_out))


_HOST = VersionHost(VERSION, _MlaDecodeV26(), M_BLK, N_BLK, merge_in_kernel=True, packed=True)
entry = _HOST.entry
example_args = _HOST.example_args
mla_decode = _HOST.mla_decode
