"""CuTe DSL MLA decode, version 28: cute_v27 with the one-split kernel's bf16 output (the
kernel writes the final output: speculative, b=128, any plan with one split) written through
shared memory (the idle latent Q tile) and stored to global as whole rows, as cute_v27's
merge stores its output.

**Why.** cute_v22's speculative warp-stall samples (b=32, s=16, t=4096, one H100:
``stall-source-20261205T1652Z-NVIDIA-H100-80GB-HBM3-cute_v22.csv.gz``, 103,112 samples, 5,472
SASS rows; one launch of 1,024 CTAs, one work item each: every epilogue line executed 8,192
warp instructions, 1,024 CTAs x 8 warps). The one-split kernel stores its bf16 output as
cute_v26's merge did: 64 32-bit ``STG.E`` a thread from the wgmma accumulator layout (SASS rows
4,790-5,047; each warp instruction 16 bytes of each of 8 rows). Those rows hold 3,663 samples
(3.55%): 491 on the 64 ``STG.E`` lines (``lg`` 432) and 2,976 ``long_sb`` on the integer
instructions between them, every one of which overwrites a register that an earlier ``STG.E``
reads (its address or data): waits for the store queue to take the operands. The drain after
``@P0 EXIT`` (row 5,049: 251) and after the last ``EXIT`` (row 5,067: 219) adds 470: 4,133
samples, **4.0% of the launch, 4.04 per CTA of its 100.7** (derived: /1,024); the
normalisation and bf16 packing before the first store 208 more (0.2%). cute_v27's bf16 kernel
has the same epilogue (its cubin built here: 64 ``STG.E`` at rows 4,777-5,034, ``@P0 EXIT`` at
5,035). The same store written through shared memory in cute_v27's merge (its decode samples,
``stall-source-20261206T1730Z-NVIDIA-H100-80GB-HBM3-cute_v27-decode.csv.gz``): 122 samples from
the first ``STSM`` to the last ``STG.E.128`` plus 25 ``drain`` after its ``EXIT`` = 147 (71 of
them from the warpgroup barrier on), against cute_v26's 288 (store rows plus drain). Every CTA
runs alone on its SM (about 224 KB of shared memory, derived from the tile shapes), so a CTA's
store tail is its SM's time: 4.0% bounds the gain at speculative.

**The change.** Only the one-split end of :meth:`store_and_merge` (``m_o`` in q's dtype, the
output itself): it calls cute_v27's :meth:`store_merged` on ``m_o[None, split, None, None]``
instead of storing from the accumulator layout: each warpgroup converts its normalised 64 x 256
O to bf16, writes it with ``stmatrix`` (16 ``stmatrix.x4`` a thread) into its own 256 columns
of the latent Q tile ``s_ql``, meets its own four warps at a 128-thread named barrier (7 +
warpgroup), reads the tile back as rows (16 ``ld.shared.v4`` a thread) and stores them with 16
``st.global.v4.b32`` (each warp instruction one row's 256 columns, 512 contiguous bytes); then
warpgroup 0's LSE stores as before. The output's row stride is dynamic (``splits * 512``), so
each row store has its own address (16 ``IMAD``-computed pairs, not one base and immediates as
in cute_v27's merge). The split kernel (fp32 partials, decode) is cute_v27's.

Why the Q tile is free there: only the score wgmmas read ``s_ql`` (no TMA writes it; nothing
writes it after the prologue's ``cp.async``, which is waited on before the first score); each
warpgroup waits on its last wgmma (``wait_group(0)``) before the epilogue's CTA barrier (the
row-sum exchange), and every thread has passed that barrier before its first ``stmatrix``, so
no wgmma of either warpgroup still reads Q. The two warpgroups write disjoint column halves and
each reads back only its own, so a warpgroup barrier is enough. One work item per CTA: the grid
is (row blocks, splits, sequences) and the kernel has no loop over items (cute_v15's persistent
schedule is another line), so no next item's Q load can race the staging; the PTX after the
epilogue's barrier has no ``wgmma``, ``cp.async`` or ``mbarrier`` and only a forward branch (a
test).

**Checked on the CPU.** fp32 PTX (decode): cute_v27's but for the kernel name. bf16 PTX
(speculative, b=128): up to the output store the same non-integer lines as cute_v27's (2,951);
after it 64 ``st.global.b32`` -> 0, + 16 ``stmatrix.x4``, + 1 ``bar.sync %r, 128``, + 16
``ld.shared.v4.b32``, + 16 ``st.global.v4.b32``, then the same 2 LSE ``st.global.f32`` (tests).
Cubin (``cuobjdump -res-usage``, ``nvdisasm`` from the venv's Triton package): 234 registers
against cute_v27's 238, no stack, no local memory; SASS 5,536 instructions against 5,456; up to
the epilogue's ``BAR.SYNC 0x0`` (row 4,702 against 4,683) the same opcodes but 19 integer ones
(address arithmetic hoisted), 160 ``HGMMA`` each, the loop's back-branch at row 4,655 (4,657);
from that barrier to ``@P0 EXIT`` 419 instructions against 352: 16 ``STSM.16.M88.4`` among the
bf16 packing, ``BAR.SYNC R5, 0x80``, 16 ``LDS.128``, 16 ``STG.E.128`` back to back in place of
64 ``STG.E``. Earlier fingerprints unchanged.

**Prediction** (same bench run and H100, cute_v27 and cute_v24 beside it, plus speculative
stall samples). Samples: the one-split output store (first output ``STSM`` to the last
``STG.E.128``) plus the drain after both ``EXIT`` from 4.0% of the speculative launch
(cute_v22's) to 1.0-2.0%; the main loop's samples per CTA not above cute_v22's (234
registers). Time: speculative (b=32, s=16) -1% to -3% per call against cute_v27 (1016.0 us in
``20261206T173014Z`` -> 986-1006 us) and -1.6% to -3.6% against cute_v24 (1022.4 us there);
b=128 (s=2; 512 CTAs of the same 64 rows x 64 tiles) -1% to -3% against cute_v27 (528.8 us ->
513-524 us), but that run put identical bf16 kernels 2.2% apart at b=128 (cute_v26 517.6,
cute_v27 528.8), so b=128 alone cannot confirm it. Decode (b=32, s=1): the fp32 kernel is
cute_v27's PTX, within +-1% of cute_v27 (82.3 us). Wrong if the store rows plus drain stay
above ~2.5% of the speculative samples (``stmatrix``, the barrier or the 128-bit stores
throttled too), or if they fall as predicted and speculative stays within +-0.5% of cute_v27
(then the store tail overlaps the SM's next CTA or is not on the launch's critical path, and
the speculative gap to FlashMLA, 880.4 us, is elsewhere).
"""

from typing import Any

import cutlass
import cutlass.cute as cute

from kernels.mla_decode.cute_common import VersionHost
from kernels.mla_decode.cute_v10 import M_BLK, N_BLK, WG_THREADS
from kernels.mla_decode.cute_v27 import _MlaDecodeV27

VERSION = "cute_v28"
DESCRIPTION = (
    "CuTe DSL: cute_v27 with the one-split kernel's bf16 output (speculative, b=128) staged in "
    "the idle Q tile (stmatrix, a warpgroup barrier) and stored to global as whole 512-byte "
    "row segments (128-bit stores) instead of 32-bit stores from the accumulator layout"
)

__all__ = ["DESCRIPTION", "VERSION", "entry", "example_args", "mla_decode"]


class _MlaDecodeV28(_MlaDecodeV27):
    """cute_v27's kernel with the one-split end of :meth:`store_and_merge` storing through
    cute_v27's :meth:`store_merged` (module doc); the split kernel (fp32 partials) is
    cute_v27's."""

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
        """One split (``m_o`` in q's dtype: the output itself): this warpgroup's normalised
        64 x 256 O through its 256 columns of the idle latent Q tile ``s_q`` and out as
        whole rows (:meth:`store_merged`), then warpgroup 0's LSEs as before. Fp32 partials:
        cute_v27's (cute_v26's turn, publish and merge)."""
        if cutlass.const_expr(m_o.element_type != cutlass.Float32):
            # s_q is idle: only the score wgmmas read it, and both warpgroups waited on their
            # last wgmma (wait_group(0)) before the epilogue's CTA barrier (the row-sum
            # exchange), which every thread has passed here. One work item per CTA (the grid
            # is (row blocks, splits, sequences); no loop over items), so no later Q load.
            tidx, _, _ = cute.arch.thread_idx()
            lane = cute.arch.lane_idx()
            n_rows = cute.size(t_cs, mode=[0])
            self.store_merged(m_o[None, split, None, None], m_block, bi, acc_o, thr_pv_rs, s_q)
            if tidx < WG_THREADS and lane % 4 == 0:
                for r in cutlass.range_constexpr(n_rows):
                    m_lse[bi, split, m_block * M_BLK + t_cs[r, 0][0]] = lse[r]
        else:
            _MlaDecodeV27.store_and_merge(
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


_HOST = VersionHost(VERSION, _MlaDecodeV28(), M_BLK, N_BLK, merge_in_kernel=True, packed=True)
entry = _HOST.entry
example_args = _HOST.example_args
mla_decode = _HOST.mla_decode
