"""CuTe DSL MLA decode, version 29: cute_v28 with warpgroup 0 posting P0 before it waits for
its own P_a V_a, so warpgroup 1's wait at P0_READY no longer includes that product, the
stage-0 refill behind it, or the O0 rescale that ptxas had hoisted above the arrival.

**Why.** cute_v28's speculative warp-stall samples (b=32, s=16, t=4096, one H100:
``stall-source-20261206T1921Z-NVIDIA-H100-80GB-HBM3-cute_v28-speculative.csv.gz``, 99,209
samples, one launch of 1,024 CTAs, 5,536 SASS rows, the cubin's; per CTA = /1,024, derived).
Warpgroup 0's loop is rows 1,201-2,662, warpgroup 1's rows 3,340-4,655 (their back-branches'
targets), 45.9 and 45.5 samples a CTA. The largest hand-over wait is warpgroup 1 at
P0_READY (named barrier 3, ``BAR.SYNC 0x3`` row 4,006; the waiting warps sit on row 4,012:
6,048 samples, 5.91 a CTA), waiting for warpgroup 0's rescaled P_a in P0. Between its MAX_A
arrival (``BAR.ARV 0x1``, row 1,711) and its P0_READY arrival (``BAR.ARV 0x3``, row 2,146)
warpgroup 0 runs: the rest of its softmax and the P_a V_a issue (rows 1,712-1,815, 2,586
samples), **the wait for P_a V_a** (``WARPGROUP.DEPBAR`` row 1,816: 3,270), **the refill of
stage 0's columns 0-255 and rope** (rows 1,817-1,925: 1,456), the MAX_B sync (rows
1,926-1,935: 4,100, 3,693 of them ``barrier`` on row 1,935), then rows 1,936-2,146 (3,753):
160 ``FMUL`` (32 rescale P_a, **128 rescale O0**: 1,626 samples), 16 ``F2FP``, 4 ``STSM``, the
proxy fence. cute_v18 meant the O0 rescale to follow the P0 arrival
(``rescale_o_after_p0_ready``); the PTX has it after ``bar.arrive 3``, but ptxas moved all
128 multiplies above the ``BAR.ARV`` (register-only work may cross an arrival). The three
bold items, 3,270 + 1,456 + 1,626 = 6,352 samples (6.20 a CTA), are on warpgroup 1's wait
and none is needed for P0: P_a V_a reads P_a's bf16 registers and V (stage 0), not the fp32
P_a that is rescaled, nor P0.

**The change.** ``p0_before_own_pv_wait`` on cute_v13's kernel (a trace-time switch; every
earlier PTX unchanged). Warpgroup 0 issues P_a V_a and commits it, then, without waiting,
syncs on MAX_B, rescales P_a (fp32, in the score accumulator, which no wgmma reads now),
converts it into a fresh 16-register bf16 fragment (P_a V_a still reads the old one), stores
it to P0 with ``stmatrix``, fences and arrives at P0_READY; only then ``wgmma.wait_group 0``
for P_a V_a, the stage-0 refill (cols 0-255 and rope, the columns that product read last),
the O0 rescale (O0 is that product's accumulator, so it must follow the wait: ptxas can no
longer hoist it above the arrival) and the P1_READY sync. Same products, same operands,
same arithmetic in the same order per value: the output is cute_v28's bit for bit.
Warpgroup 1, the barrier protocol and the epilogue are cute_v28's. The split kernel (fp32
partials, decode) runs the same loop, so it gets the same change.

Why it is safe: P0's last reader is warpgroup 1's P0 V_a of the pair before, completed before
warpgroup 1's MAX_B arrival (unchanged); P_a V_a's A operand is the old fragment, untouched
until the wait; the refill still follows the wait on the product that read those columns
last, and precedes the next score product on them (issued after P1_READY), whose slice waits
are unchanged. Shared memory: unchanged at 230,560 bytes (Q 64 KB + its rope 8 KB holding
P1, two stages 2 x 72 KB, P0 8 KB, maxima, sums, flag, 18 mbarriers ending at byte 230,559,
read from the PTX) of the 232,448 a CTA may have: 1,888 bytes free, so a second P buffer
(8 KB) or a third KV stage does not fit; this change needs none.

**Checked on the CPU.** PTX (both output dtypes): outside warpgroup 0's span from
``bar.arrive 1`` to ``bar.sync 4`` the same non-integer lines in the same order as cute_v28's;
inside it the same lines in another order (183 each): cute_v28 ``commit``, ``wait_group 0``,
5 x (``expect_tx``, TMA), ``bar.sync 2``, 4 ``stmatrix``, fence, ``bar.arrive 3``; cute_v29
``commit``, ``bar.sync 2``, 4 ``stmatrix``, fence, ``bar.arrive 3``, ``wait_group 0``, 5 x
(``expect_tx``, TMA), with the 128 ``mul.f32`` of O0 after the wait (tests). Cubin
(``cuobjdump -res-usage``, ``nvdisasm`` from the venv's Triton package): bf16 236 registers
against cute_v28's 234, fp32 254 against 254, no stack, no local memory (Triton's ptxas 12.8
on the PTX, ``.version`` lowered to 8.7: no spills, no wgmma serialisation warning); SASS
5,544 instructions against 5,536 (fp32 6,288 against 6,296), 160 ``HGMMA``, 45
``WARPGROUP.ARRIVE``, 8 ``WARPGROUP.DEPBAR`` each. bf16 rows: P_a V_a's last ``HGMMA`` at
1,839, ``BAR.SYNC 0x2`` at 1,840 (cute_v28: 1,815, then ``DEPBAR`` 1,816, the refill,
``BAR.SYNC 0x2`` 1,926), ``BAR.ARV 0x3`` at 1,912 (72 rows after the sync: 34 ``FMUL``, 16
``F2FP``, 4 ``STSM``; cute_v28 220 rows, 160 ``FMUL``), ``DEPBAR`` 1,913, the 5 ``UTMALDG``
1,933-2,020, ``BAR.SYNC 0x4`` 2,024, the 128 O0 ``FMUL`` after it, before P_b V_b's
``HGMMA``. Warpgroup 1's landmarks are cute_v28's, 3 rows later (``BAR.SYNC 0x1`` 3,343,
``BAR.ARV 0x2`` 3,761, ``BAR.SYNC 0x3`` 4,009, ``BAR.ARV 0x4`` 4,055). Earlier fingerprints
unchanged.

**Prediction** (same bench run and H100, cute_v27 and cute_v28 beside it, plus speculative
stall samples, split as above). Samples: warpgroup 1's wait at P0_READY from 5.91 a CTA to
<= 3.5; the three hand-over waits of cute_v28's table (named barriers 3, 1, 2) from 14.42 a
CTA to <= 12.5; the main loop from 93.18 a CTA to 87-91.5. Time, speculative: -2% to -5%
per call against cute_v28 (970.8 us in ``20261206T192101Z`` -> 922-951 us); b=128: -2% to -5%
(503.6 -> 478-494 us; that run's identical bf16 kernels were 1.5% apart there, so b=128
alone cannot confirm it); decode (the fp32 kernel, same loop change, tiles from DRAM):
within -2% to +1% of cute_v28 (82.5 us). Wrong if the P0_READY wait stays above ~4.5 a CTA
(the wait moved to MAX_B: warpgroup 1's softmax, not warpgroup 0's product, is the chain),
or if it falls as predicted and speculative moves less than 1% (the tensor pipe was not
draining there; the wait moved to MAX_A or to a wgmma wait), or if the later stage-0 refill
shows: the first stage-0 slice poll of warpgroup 0's next score product (row 2,294 in
cute_v28: 280 samples) above ~600.
"""

from kernels.mla_decode.cute_common import VersionHost
from kernels.mla_decode.cute_v10 import M_BLK, N_BLK
from kernels.mla_decode.cute_v28 import _MlaDecodeV28

VERSION = "cute_v29"
DESCRIPTION = (
    "CuTe DSL: cute_v28 with warpgroup 0 posting P0 before waiting for its own P_a V_a (P0 "
    "from a second register fragment), then the wait, the stage-0 refill and the O0 rescale, "
    "so warpgroup 1's wait at P0_READY no longer includes them"
)

__all__ = ["DESCRIPTION", "VERSION", "entry", "example_args", "mla_decode"]


class _MlaDecodeV29(_MlaDecodeV28):
    """cute_v28's kernel with ``p0_before_own_pv_wait`` on (module doc)."""

    p0_before_own_pv_wait = True


# O0 is P_a V_a's accumulator: its rescale must follow the wait, after the P0 arrival
assert _MlaDecodeV29.rescale_o_after_p0_ready

_HOST = VersionHost(VERSION, _MlaDecodeV29(), M_BLK, N_BLK, merge_in_kernel=True, packed=True)
entry = _HOST.entry
example_args = _HOST.example_args
mla_decode = _HOST.mla_decode
