"""CuTe DSL MLA decode, version 27: cute_v26 with the last arriver's merged bf16 output
written through shared memory (the idle latent Q tile) and stored to global as whole rows.

**Why.** cute_v26's decode warp-stall samples (b=32, s=1, t=4096, one H100:
``stall-source-20261206T1656Z-NVIDIA-H100-80GB-HBM3-cute_v26-decode.csv.gz``, 8,408 samples;
split by region in ``/work/brief/v26_samples.md`` and in the devlog's cute_v26 section) put
288 samples on the merge's bf16 output stores and the drain after their ``EXIT``: 228 ``lg``
(load/store queue throttle) on the 64 ``STG.E`` lines (SASS rows 5,703-5,768) and 52
``drain`` after ``@P2 EXIT``, against 24 for cute_v25's row-layout stores (16 ``STG.E.128`` a
thread). That is +4.1 samples per merging CTA (288 / 64 = 4.50 against 0.38), which ate the
2.9 + 2.0 + 2.2 the merge from registers saved; kernel-wide ``lg`` went 50 -> 312. cute_v26
stores from the wgmma accumulator layout (``autovec_copy``): 64 32-bit stores a thread, each
warp instruction writing 16 bytes of each of 8 rows, half of each 32-byte sector.

**The change.** Only :meth:`store_merged`, the last arriver's output store (cute_v26's last
four lines of ``merge_from_registers`` made a method first, with the latent Q tile passed
down from cute_v13's kernel to ``store_and_merge``: every earlier PTX unchanged). Each
warpgroup converts its 64 x 256 merged O to bf16 as before, writes it with ``stmatrix``
(16 ``stmatrix.x4`` a thread, a tiled copy over the P@V MMA's accumulator layout, as cute_v20
stores P) into its own 256 columns of the latent Q tile ``s_ql`` (64 x 512 bf16, 128-byte
swizzle: each 8-row group's 16-byte chunks in distinct banks), meets its own four warps at a
128-thread named barrier (``WG_LOCAL``, 7 + warpgroup: only its own warps read those columns),
then reads the tile back as rows, 16 ``ld.shared.v4`` a thread (lane l of warp w: columns
8 l .. 8 l + 7 of rows w, w + 4, ..., w + 60), and stores them with 16 ``st.global.v4.b32``:
each warp instruction writes one row's 256 columns, 512 contiguous bytes (four whole 128-byte
lines). Same turn, poll, publish, same loads and arithmetic; the counter zeroing after.

Why the Q tile is free there: ``s_ql`` is read only by the score wgmmas (``t_aql``), never by
TMA (KV goes to ``s_kl``/``s_kh``/``s_kr``) and never written after the prologue's
``cp.async``; each warpgroup's last score and P@V wgmmas are waited on (``wait_group(0)``)
before the epilogue's CTA barrier (the row-sum exchange), and the turn's CTA barrier follows;
after it the last arriver reads only registers, global memory and ``s_arrived``. ``s_qr``
(P1) is not touched. The two warpgroups write disjoint column halves, so no CTA barrier.

**Checked on the CPU.** bf16 output (speculative, b=128): the PTX is cute_v26's but for the
kernel name. fp32 partials: up to the first ``atom`` the same 9,005 neutral PTX lines as
cute_v26's, 12 integer lines of a descriptor computation in another order; after it the same
opcode counts (3 ``atom``, 3 fences, 66 partial stores, 64 ``ld.global.v2.f32``, 4 LSE loads)
except: 64 ``st.global.b32`` -> 0, + 16 ``stmatrix.x4`` after the merge's last load, + 1
``bar.sync %r, 128``, + 16 ``ld.shared.v4.b32``, + 16 ``st.global.v4.b32`` 4,096 bytes (4 rows)
apart; a CPU trace checks that the stmatrix copy takes each register at the coordinate the
MMA gave it and that both copies cover the 64 x 256 tile once (tests). Cubin (``cuobjdump
-res-usage`` and ``nvdisasm`` from the venv's Triton package): 254 registers against 253, no
stack, no local memory; SASS 6,296 instructions against 6,176; up to row 5,064 (the last
arriver's start) the same rows at the same offsets (the loop's back-branch at row 4,672,
0x12400; the first ``ATOMG`` at 4,849, 0x12f10; the earlier arriver's path 5,043-5,063; 160
``HGMMA`` each), 240 of those 5,064 opcodes differing as integer equivalents (``IMAD.U32`` /
``MOV`` of another register allocation); the last arriver's path from row 5,064 to its
``EXIT`` 830 instructions against 712: 16 ``STSM.16.M88.4`` interleaved with the bf16 packing,
``BAR.SYNC R6, 0x80``, 16 ``LDS.128`` back to back, 16 ``STG.E.128``, ``@P0 EXIT`` (cute_v26:
64 ``STG.E``). Earlier fingerprints unchanged (``python -m kernels.mla_decode.ptx_fingerprints
--check``).

**Prediction** (same bench run and H100, cute_v26 and cute_v24 beside it, plus decode stall
samples). Samples: the output store's rows (``STSM`` to the last ``STG.E.128``) plus the
drain after its ``EXIT`` from 288 to <= 80 (<= 1.25 per merging CTA; cute_v25's row-layout
stores cost 24); kernel-wide ``lg`` from 312 to <= 120; the merging CTA's tail after its last
tile from 10.5-12.0 to 7.5-9.5 samples. Time, decode (b=32, s=1, t=4096): -1.5% to -4% per
call against cute_v26 (86.2 us in ``20261206T165622Z`` -> 82.8-84.9 us), i.e. -3.6% to -6.1%
against cute_v24 (88.1 us there), level with or under FlashMLA (82.0 us there). Speculative
(b=32, s=16) and b=128 (s=2): one split, the bf16 kernel is cute_v26's PTX (and cute_v24's):
within +-1% of cute_v26, +-1.5% of cute_v24 (that run's noise between identical kernels was
about 1%). Wrong if the store rows plus drain stay above ~100 samples (``stmatrix``, the
barrier or the 128-bit stores are throttled too), or if they fall as predicted and decode stays
within +-1% of cute_v26 (then the merging CTA's tail is not the call's critical path as read,
and the next step is the launch's timeline, not more tail work); the main loop's samples per
CTA above cute_v26's 55.0 would charge the 254th register.
"""

from typing import Any

import cutlass
import cutlass.cute as cute

from kernels.mla_decode.cute_common import VersionHost
from kernels.mla_decode.cute_v10 import D_HALF, M_BLK, N_BLK, WG_LOCAL, WG_THREADS
from kernels.mla_decode.cute_v26 import _MlaDecodeV26

VERSION = "cute_v27"
DESCRIPTION = (
    "CuTe DSL: cute_v26 with the last arriver's merged bf16 output staged in the idle Q tile "
    "(stmatrix, a warpgroup barrier) and stored to global as whole 512-byte row segments "
    "(128-bit stores) instead of 32-bit stores from the accumulator layout"
)

__all__ = ["DESCRIPTION", "VERSION", "entry", "example_args", "mla_decode"]

ROW_CHUNK = 8  # bf16 per 128-bit access
ROW_THREADS = D_HALF // ROW_CHUNK  # 32: one warp spans a warpgroup's 256 columns of a row


class _MlaDecodeV27(_MlaDecodeV26):
    """cute_v26's kernel with :meth:`store_merged` through shared memory (module doc); the
    one-split kernel (bf16 output) is cute_v26's."""

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
        """This warpgroup's 64 x 256 merged output to bf16, into its 256 columns of the latent
        Q tile by ``stmatrix`` (the Q tile's 128-byte swizzle), a warpgroup barrier, then out
        as rows: each warp reads a 256-column row segment (16 bytes a lane) and stores it with
        one 128-bit store a lane, 16 rows a warp."""
        tidx, _, _ = cute.arch.thread_idx()
        wg = tidx // WG_THREADS
        wg_tidx = tidx % WG_THREADS
        dtype = m_out.element_type
        r_out = cute.make_rmem_tensor_like(acc_o, dtype)
        r_out.store(acc_o.load().to(dtype))
        s_out = cute.local_tile(s_q, (M_BLK, D_HALF), (0, wg))
        stsm = cute.make_tiled_copy_C(
            cute.make_copy_atom(cute.nvgpu.warp.StMatrix8x8x16bOp(False, 4), dtype), thr_pv_rs
        )
        thr_stsm = stsm.get_slice(wg_tidx)
        cute.copy(stsm, thr_stsm.retile(r_out), thr_stsm.partition_D(s_out))
        # the four warps of this warpgroup wrote its 256 columns; only they read them
        cute.arch.barrier(barrier_id=WG_LOCAL[0] + wg, number_of_threads=WG_THREADS)
        rows = cute.make_tiled_copy_tv(
            cute.make_copy_atom(cute.nvgpu.CopyUniversalOp(), dtype, num_bits_per_copy=128),
            cute.make_layout((WG_THREADS // ROW_THREADS, ROW_THREADS), stride=(ROW_THREADS, 1)),
            cute.make_layout((1, ROW_CHUNK)),
        )
        thr_rows = rows.get_slice(wg_tidx)
        g_out = cute.local_tile(m_out[bi, None, None], (M_BLK, D_HALF), (m_block, wg))
        t_s = thr_rows.partition_S(s_out)
        t_g = thr_rows.partition_D(g_out)
        r_rows = cute.make_rmem_tensor_like(t_s, dtype)
        cute.copy(rows, t_s, r_rows)
        cute.copy(rows, r_rows, t_g)


_HOST = VersionHost(VERSION, _MlaDecodeV27(), M_BLK, N_BLK, merge_in_kernel=True, packed=True)
entry = _HOST.entry
example_args = _HOST.example_args
mla_decode = _HOST.mla_decode
