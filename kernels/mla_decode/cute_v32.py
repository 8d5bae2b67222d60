"""CuTe DSL MLA decode, version 32: cute_v31 with the shared running row maximum moved only
when a tile's maximum exceeds it by more than 8 (base 2), so O is rescaled only on such a
move, each of the three O rescales of a pair behind a warp-uniform branch.

**Why.** In the one-split bf16 kernel (speculative, b=128) cute_v31 is 0.94x FlashMLA
(``20261207T095533Z-NVIDIA-H100-80GB-HBM3.json``: 936.2 against 884.0 us, 501.1 against 469.9),
and the two loops now run the same products, hand-overs and refills in the same order (the
devlog from cute_v22 to v30). Every pair of KV tiles, each thread rescales O three times, 128
``FMUL`` each (its 64 x 256 fp32 half of O over 128 threads), and each lies on a path to a
wgmma: warpgroup 0's O0 by 2^(m_prev - m_a) before it can issue P_a V_a (the product the
tensor pipe waits for after both score products), O0 by 2^(m_a - m_b) after its P0 post and
before P1 V_b, and warpgroup 1's O1 by 2^(m_prev - m_b) before P_b V_b: 384 of the ~2,250
instructions the two warpgroups' loops issue per thread and pair (their 1,465 and 1,316 SASS
rows less the ~250 each of the last tile's mask, which a branch skips).
FlashMLA rescales the same three times (``wg0_bunch_0``, ``wg0_rescale_rO0``,
``wg1_bunch_0``), and posts each maximum (``sScale0Ready``, ``sScale1Ready``) only after its
exponentials and the O rescale; it is not a difference from FlashMLA but work both do that
the data rarely needs: with the bench's random Q and KV (scores of standard deviation 1,
1.44 base-2 units after the scale) a row's maximum over the first 64 keys is ~3.5 units and
over 4,096 ~5.3, so after the first tile no maximum ever moves by 8 and every later factor
is 1. The SASS cute_v31 runs (CuTe DSL 4.3.5's own ptxas, ``ptx_fingerprints.version_cubin``,
bf16 kernel; rows in address order, static counts) also shows where those multiplies cost:
ptxas hoisted 64 of warpgroup 0's 128 pre-P_a V_a ``FMUL`` and 23 of its 34 ``MUFU.EX2``
above its MAX_A arrival (655 rows from the loop's wgmma wait to ``BAR.ARV 0x1``), and 16
``MUFU`` above warpgroup 1's MAX_B arrival (418 rows from ``BAR.SYNC 0x1``); at 16 exponentials
a clock per SM a warp's ``MUFU`` holds its sub-partition's unit 8 cycles, so the 23 alone are
~184 cycles on the path warpgroup 1 waits on at MAX_A, the largest hand-over wait left in
cute_v29's speculative samples (4,757 samples, ~4.6 a CTA of ~92.5; devlog, cute_v29).

**The change** (the softmax only; both kernels). The maximum each warpgroup posts (m_a,
m_b) is its base (warpgroup 0: the running maximum, warpgroup 1: the m_a just posted)
unless the tile's maximum exceeds the base by more than ``MAX_MOVE_THRESHOLD`` = 8, then the
tile's maximum (a compare and a select instead of ``max``). P = 2^(S scale - m) then stays
<= 2^8 (bf16 has fp32's exponent range: nothing overflows, the rounding is relative), the row
sums <= 4,096 x 2^8 in fp32, and O, the row sums and the LSE are exact softmax algebra for any
common reference, so both O halves, the row sums and the split partials stay consistent:
the two warpgroups still agree on one reference per row through the same posted values.
Each O rescale becomes a branch on a ballot over the warp (``vote.sync.ballot``) of "some
row's reference moved", taken by the whole warp or none (a warp's 16 rows; a row that did
not move is multiplied by 2^0 when another did, as in cute_v31). In ``softmax_rest`` the
factors and the branch come first and P's 32 exponentials after it, so the branch ends the
basic block holding the caller's MAX_A / MAX_B arrival and ptxas can no longer pull the
exponentials above it. Same products, barriers, copies and order (a test); the output is
not cute_v31's bit for bit (P against another reference rounds differently in bf16).

*Checked on the CPU* (CuTe DSL's ptxas, as launched): each of the three branch bodies is
exactly the 128 ``FMUL`` (no predication), no other instruction moved into them; bf16 kernel
254 registers (cute_v31 236), fp32 234 (238), no stack or local memory, the same 160
``HGMMA``, 8 ``WARPGROUP.DEPBAR``, 45 ``WARPGROUP.ARRIVE``, 326 ``SYNCS``, 36 ``UTMALDG``
and named barriers as cute_v31 (no wgmma serialisation). bf16 rows: loop's wgmma wait to
``BAR.ARV 0x1`` 655 -> 495 (``MUFU`` 23 -> 2, ``FMUL`` 66 -> 2); ``BAR.SYNC 0x1`` to
``BAR.ARV 0x2`` 418 -> 352 (``MUFU`` 16 -> 2); loop top to warpgroup 0's first P_a V_a
``HGMMA`` 773 -> 739 (611 when the branch skips); ``BAR.SYNC 0x1`` to warpgroup 1's first
P_b V_b ``HGMMA`` 648 -> 659 (531 skipped); ``BAR.ARV 0x3`` to ``BAR.SYNC 0x4`` 112 -> 245
(117 skipped).

**Prediction** (same bench run and H100, cute_v31 beside it; the bench's random inputs, so
the branches skip after the first pair). Speculative (b=32, s=16, t=4096) -1.5% to -4% per
call against cute_v31 (936 -> ~900-922 us), b=128 (s=2) -1.5% to -4%; decode (b=32, s=1,
the split fp32 kernel, tiles from DRAM, a merge tail) 0% to -2%. In speculative stall samples
the MAX_A wait (warpgroup 1 at ``BAR.SYNC 0x1``) and warpgroup 0's wait at MAX_B fall.
Wrong if speculative moves less than 1% (then the tensor pipe does not idle on these paths:
the bubble is elsewhere, e.g. both score products finishing together), or if it is slower
(the bf16 kernel's 254 registers or the branches cost more than they save); a GPU test
forces moves mid-sequence (KV tiles scaled up) to check the taken branches against the fp32
reference.
"""

from typing import Any

import cutlass
import cutlass.cute as cute

from kernels.mla_decode.cute_common import VersionHost, mn_view
from kernels.mla_decode.cute_v10 import M_BLK, N_BLK
from kernels.mla_decode.cute_v31 import _MlaDecodeV31

VERSION = "cute_v32"
DESCRIPTION = (
    "CuTe DSL: cute_v31 with the shared running row maximum moved only when a tile's maximum "
    "exceeds it by more than 2^8, each O rescale skipped by a warp-uniform branch when no row "
    "of the warp moved"
)

__all__ = ["DESCRIPTION", "MAX_MOVE_THRESHOLD", "VERSION", "entry", "example_args", "mla_decode"]

# How far (base-2 exponent units) a tile's row maximum may exceed the running one before the
# running one moves: P = 2^(s - m) stays <= 2^8 = 256, exact in bf16's exponent range, and a
# row sum of 4,096 such terms <= 2^20 in fp32 (the threshold FlashAttention 4 uses)
MAX_MOVE_THRESHOLD = 8.0


class _MlaDecodeV32(_MlaDecodeV31):
    """cute_v31's kernel with the running maximum moved only past a threshold and the O
    rescales skipped where no row of a warp moved (module doc)."""

    max_move_threshold = MAX_MOVE_THRESHOLD

    @cute.jit
    def softmax_rest(
        self,
        acc_s: cute.Tensor,
        acc_o: cute.Tensor,
        row_max: cute.Tensor,
        row_sum: cute.Tensor,
        m_new: cute.Tensor,
        scale_log2: cutlass.Float32,
    ):
        """cute_v19's second half, reordered around a branch: first each row's factor from
        the old maximum and O's rescale by it (:meth:`rescale_o_rows`, skipped when no row of
        the warp moved), then P = 2^(S scale - m_new), the row sums and the running maximum,
        as before. The branch ends the basic block that holds the caller's arrival (MAX_A or
        MAX_B), so the assembler cannot schedule P's 32 exponentials above that arrival."""
        acc_s_mn = mn_view(acc_s)
        acc_o_mn = mn_view(acc_o)
        n_rows = cute.size(acc_s_mn, mode=[0])
        corr = cute.make_rmem_tensor((n_rows,), cutlass.Float32)
        moved = cute.make_rmem_tensor((n_rows,), cutlass.Float32)
        for r in cutlass.range_constexpr(n_rows):
            corr[r] = cute.math.exp2(row_max[r] - m_new[r], fastmath=True)
            moved[r] = m_new[r] - row_max[r]
        self.rescale_o_rows(acc_o_mn, corr, moved)
        for r in cutlass.range_constexpr(n_rows):
            new_max = m_new[r]
            p_row = cute.math.exp2(acc_s_mn[r, None].load() * scale_log2 - new_max, fastmath=True)
            row_sum[r] = row_sum[r] * corr[r] + p_row.reduce(
                cute.ReductionOp.ADD, cutlass.Float32.zero, 0
            )
            row_max[r] = new_max
            acc_s_mn[r, None] = p_row

    def rescale_o_after_p0(self, acc_o_mn: cute.Tensor, o_scale: cute.Tensor, o_moved: Any) -> None:
        """Warpgroup 0's O0 from m_a to m_b after the P0 post (cute_v18's place), skipped
        when m_b = m_a in every row of the warp."""
        self.rescale_o_rows(acc_o_mn, o_scale, o_moved)

    @cute.jit
    def rescale_o_rows(self, acc_o_mn: cute.Tensor, scale: cute.Tensor, moved: cute.Tensor):
        """Each row of this thread's O by its factor, inside a branch that the whole warp
        takes or skips (a ballot over the warp's 32 lanes): taken when some lane has a row
        whose maximum moved (``moved`` non-zero: a difference of maxima, NaN when both are
        -inf, which also takes it, as every earlier version multiplied). Rows of the warp
        that did not move are multiplied by 2^0 then, as in cute_v31."""
        n_rows = cute.size(scale)
        any_row = moved[0] != 0.0
        for r in cutlass.range_constexpr(1, n_rows):
            any_row = any_row | (moved[r] != 0.0)
        if cute.arch.vote_ballot_sync(any_row) != 0:
            for r in cutlass.range_constexpr(n_rows):
                acc_o_mn[r, None] = acc_o_mn[r, None].load() * scale[r]


_HOST = VersionHost(VERSION, _MlaDecodeV32(), M_BLK, N_BLK, merge_in_kernel=True, packed=True)
entry = _HOST.entry
example_args = _HOST.example_args
mla_decode = _HOST.mla_decode
