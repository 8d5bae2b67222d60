"""CuTe DSL MLA decode, version 25: cute_v24 with the in-kernel split merge batched: each
warp loads all its rows' LSEs per split at once, then the partials of four rows per split at
once, instead of one row after another.

**Why.** The first warp-stall samples at decode (b=32, s=1, t=4096, one H100:
``stall-source-20261206T1428Z-NVIDIA-H100-80GB-HBM3-cute_v24-decode.csv.gz`` against
FlashMLA's in the same session; ``docs/kernels/mla_decode.md``, "Decode stall samples
against FlashMLA") put cute_v24's loop over KV tiles at the same samples per CTA as
FlashMLA's main kernel (60.7 against 60.0, 32 tiles each on average) and its difference in
the tail after the last tile: 1,545 of 9,312 samples, of which the in-kernel merge by the
later CTA of each split pair (cute_v7's ``merge_if_last``) holds 885, 13.8 per merging CTA
out of its 79.7, ~17% of the launch. Of those 885, 373 are ``no_inst`` (the merge is 2,309
SASS instructions run once per CTA, cold in the instruction cache) and 309 ``long_sb``: each
warp merges its 8 rows one after another, and per row at 2 splits cute_v24's PTX makes 3
dependent L2 round trips (the LSE maximum loop, which LLVM unrolled by 16, 8 and 4 and whose
remainder loop runs at 2 splits, one load and one ``max`` per iteration; the weighted sum's
loads of both splits; then the row's stores, which the next row's loads may not pass): 24
round trips per warp in series.

**The change.** ``merge_if_last`` on cute_v24's kernel (cute_v13's class), everything else
cute_v24's. The same hand-shake (CTA barrier, one thread's fence + ``atom.add`` + fence, CTA
barrier, the last arriver's fence) and the same arithmetic per output element in the same
split order (``top = max`` over splits of the LSE; ``w = 2^(lse - top)``, ``den += w``,
``acc += part * w`` per split; ``acc * rcp(den)``), with the loads batched: pass 1 loads the
LSE of all 8 of the warp's rows for one split before any ``max`` (a loop over splits, not
unrolled); pass 2, for 4 rows at a time (two groups), loads one split's 4 LSEs and 4 x 16
fp32 partial columns (4 ``ld.global.v4.f32`` per row) before using any, accumulates, and
after the last split stores the 4 rows. At 2 splits: 2 + 2 x 2 = 6 round trips per warp
instead of 24. Registers: 64 accumulators + 64 loaded partials in pass 2 (the main loop's
are dead by then); the partials in registers are row-major, so each row's 16 columns load
as four 16-byte vectors. The one-split kernel (bf16 output, speculative and b=128) has no
merge and is unchanged.

**Checked on the CPU.** PTX, fp32 partials: every line up to the merge's ``atom`` is
cute_v24's (register and label numbers and the kernel name made neutral); from there 944
lines against cute_v24's 2,530, with 32 ``ld.global.v4.f32`` (cute_v24: 96, its unrolled
copies) and 16 ``ld.global.f32`` (cute_v24: 256), 8 ``max.f32`` and 8 ``ex2.approx`` (232,
24), the same 17 ``st.global``, one ``atom``, two fences; in each loop body of the merge all
loads come before the first ``max`` / ``ex2`` that uses them (a test reads all of this). bf16
output: the PTX is cute_v24's but for the kernel's name. The cubin CuTe DSL's ptxas
assembles (nvdisasm from the venv's Triton package): 238 registers and no stack frame, as
cute_v24; the fp32 kernel's SASS from the atomic to its end 1,196 instructions against
2,732, where ptxas issues pass 2's 4 scalar and 16 vector loads of a split back to back
before the first ``MUFU.EX2``; cubin 108,720 bytes against 133,296. Every earlier version's
PTX is unchanged (``python -m kernels.mla_decode.ptx_fingerprints --check``).

**Prediction** (per call against cute_v24 in the same run, H100 or H200). Decode (b=32,
s=1, t=4096: 2 splits, the merge runs): -4% to -10% in time (89.3 us on the H100 of
``20261206T142746Z`` -> 80-86 us; FlashMLA 83.6 us there), from the merge's samples
falling from 885 to about 300-500 of a cute_v24-sized launch (its long_sb by ~3/4 with the
round trips, its no_inst by about half with the code) out of the critical CTA's 79.7 per
CTA; in decode stall samples the region from the atomic to the exit at 3-6% of the kernel's
(cute_v24: 9.5%). Speculative (b=32, s=16) and b=128 (s=2): one split, the bf16 kernel is
cute_v24's PTX: -1% to +1% (noise). What would show it wrong: decode within +-1.5% of
cute_v24 with the merge's samples down (the tail is then not on the critical path as read),
or the merge's samples not down (the round trips are not what its long_sb waits for).
"""

import cutlass
import cutlass.cute as cute
import cutlass.utils.distributed as distributed

from kernels.mla_decode.cute_common import VersionHost
from kernels.mla_decode.cute_v7 import MERGE_COLS, N_WARPS
from kernels.mla_decode.cute_v10 import M_BLK, N_BLK
from kernels.mla_decode.cute_v24 import _MlaDecodeV24

VERSION = "cute_v25"
DESCRIPTION = (
    "CuTe DSL: cute_v24 with the in-kernel split merge batched (every row's LSEs per split in "
    "one round of loads, then four rows' partials per split in flight at once)"
)

__all__ = ["DESCRIPTION", "VERSION", "entry", "example_args", "mla_decode"]

ROWS_PER_WARP = M_BLK // N_WARPS  # 8: the rows of the 64-row block one warp merges
ROW_GROUP = 4  # rows whose partials a warp holds in flight at once (64 + 64 fp32 registers)


class _MlaDecodeV25(_MlaDecodeV24):
    """cute_v24's kernel with a batched :meth:`merge_if_last` (module doc)."""

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
        """cute_v7's last-arriver merge (same release/acquire handshake, same arithmetic per
        element in the same split order), with the loads batched: pass 1 takes the maximum
        LSE of the warp's 8 rows, one load of each row per split; pass 2, for 4 rows at a
        time, loads each split's LSE and 16-column partial of the 4 rows before using any."""
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
            row0 = m_block * M_BLK + warp  # the warp's rows: row0 + i * N_WARPS
            top = cute.make_rmem_tensor((ROWS_PER_WARP,), cutlass.Float32)
            top.fill(-cutlass.Float32.inf)
            for sp in cutlass.range(splits, unroll=1):
                for i in cutlass.range_constexpr(ROWS_PER_WARP):
                    top[i] = cute.arch.fmax(top[i], m_lse[bi, sp, row0 + i * N_WARPS])
            # row-major: each row's 16 columns contiguous, so its partial loads stay 16-byte
            rows_cols = cute.make_layout((ROW_GROUP, MERGE_COLS), stride=(MERGE_COLS, 1))
            acc = cute.make_rmem_tensor(rows_cols, cutlass.Float32)
            part = cute.make_rmem_tensor(rows_cols, cutlass.Float32)
            den = cute.make_rmem_tensor((ROW_GROUP,), cutlass.Float32)
            wgt = cute.make_rmem_tensor((ROW_GROUP,), cutlass.Float32)
            res = cute.make_rmem_tensor((MERGE_COLS,), m_out.element_type)
            for g in cutlass.range_constexpr(ROWS_PER_WARP // ROW_GROUP):
                acc.fill(0.0)
                den.fill(0.0)
                for sp in cutlass.range(splits, unroll=1):
                    for j in cutlass.range_constexpr(ROW_GROUP):  # every load first
                        row = row0 + (g * ROW_GROUP + j) * N_WARPS
                        wgt[j] = m_lse[bi, sp, row]
                        cute.autovec_copy(
                            cute.local_tile(m_o[bi, sp, row, None], (MERGE_COLS,), (lane,)),
                            part[j, None],
                        )
                    for j in cutlass.range_constexpr(ROW_GROUP):
                        w = cute.math.exp2(wgt[j] - top[g * ROW_GROUP + j], fastmath=True)
                        den[j] = den[j] + w
                        acc[j, None].store(acc[j, None].load() + part[j, None].load() * w)
                for j in cutlass.range_constexpr(ROW_GROUP):
                    row = row0 + (g * ROW_GROUP + j) * N_WARPS
                    res.store(
                        (acc[j, None].load() * cute.arch.rcp_approx(den[j])).to(m_out.element_type)
                    )
                    cute.autovec_copy(
                        res, cute.local_tile(m_out[bi, row, None], (MERGE_COLS,), (lane,))
                    )
            if tidx == 0:
                m_sem[bi, m_block] = 0  # ready for the next call


_HOST = VersionHost(VERSION, _MlaDecodeV25(), M_BLK, N_BLK, merge_in_kernel=True, packed=True)
entry = _HOST.entry
example_args = _HOST.example_args
mla_decode = _HOST.mla_decode
