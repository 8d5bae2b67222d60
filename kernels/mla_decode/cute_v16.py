"""CuTe DSL MLA decode, version 16: cute_v15 with the score product's wgmma descriptors
formed in uniform registers, one k step at a time.

Measured on the H200 (2026-12-05, ``results/20261205T024149Z-NVIDIA-H200.json``): no change
against cute_v15 at any shape, with about 7% fewer executed instructions (devlog). It
compiles for sm_90a on the CPU too (PTX fingerprinted, SASS read from the cubin CuTe DSL
assembles).

**What the SASS showed.** FlashMLA's two MMA loops hold 10 and 2 register-to-uniform moves
(``R2UR``); cute_v7's and cute_v15's one loop holds 84 as CuTe DSL assembles it (157 with the
CUDA 13.5 ptxas), with the same 40 wgmmas per KV tile
(``results/ptx/mla-sass-structure-*.json``). A wgmma reads its two shared-memory descriptors
from uniform registers. In the PTX of cute_v7 the compiler has computed all 72 descriptors
of the 36 k16 steps of the score product (a constant or the stage's base, plus a constant per
step) before the first wgmma; 72 64-bit values do not fit in a warp's 63 uniform registers,
so ptxas keeps them in ordinary registers and copies each one over before its wgmma. A
hand-written PTX loop of 36 wgmmas reproduces it (descriptors computed up front: 142 R2UR;
each computed just before its wgmma: none, 72 UIADD3), and nothing else changed the count
(marking the warpgroup index, the sequence length or the loop bounds warp-uniform; a
constant stage per branch; ptxas register-usage levels). FlashMLA's CUTLASS code forms each
step's descriptor just before its wgmma, from a base kept in a uniform register.

**The change.** Each k step indexes the operand views with
:func:`kernels.mla_decode.cute_common.pinned_index` (``k`` through an inline ``mov`` that
keeps its place among the wgmmas), so its descriptors can only be computed after the
previous wgmma was issued; ptxas then forms them with uniform adds. The values are the same:
the index equals ``k``. Nothing else changes (``pin_mma_descriptors`` on cute_v7's class; the
PTX of every other version is unchanged, its fingerprint checks it).

**Checked on the CPU.** As CuTe DSL assembles it, the main loop goes from 1,457 to 1,377
instructions and from 84 to 8 ``R2UR`` (the 8 left feed the P@V operands, whose offsets
depend on the warpgroup); registers 218 to 212 with the CUDA 13.5 ptxas; the same 40 wgmmas
(``test_cute_v16_forms_the_score_descriptors_in_uniform_registers``).

**Prediction.** Small: 0-3% at both trial shapes. The copies sit on warpgroup 0's issue
path between its wgmmas, about two instructions per k step, while one m64n64k16 step keeps
the tensor pipe busy for about 32 cycles, so the wgmmas were probably not starved of issue;
the 80 fewer instructions per tile (about 6% of the loop) matter only where warpgroup 0's
issue is on the critical path, the softmax and P store between the score and P@V products.
What it settles either way: whether the instruction gap to FlashMLA (1.30-1.37x issued
instructions at speculative, ``results/ncu/mla-issued-instructions-*.json``) costs time.
"""

from kernels.mla_decode.cute_v2 import M_BLK, N_BLK
from kernels.mla_decode.cute_v15 import _MlaDecodeV15, _PersistentHost

VERSION = "cute_v16"
DESCRIPTION = (
    "CuTe DSL: cute_v15 with each k step of the score product indexing its operands through "
    "an opaque value, so its wgmma descriptors are built in uniform registers just before it"
)

__all__ = ["DESCRIPTION", "VERSION", "entry", "example_args", "mla_decode"]


class _MlaDecodeV16(_MlaDecodeV15):
    """cute_v15's persistent kernel with ``pin_mma_descriptors`` on (module doc)."""

    pin_mma_descriptors = True


_HOST = _PersistentHost(VERSION, _MlaDecodeV16(), M_BLK, N_BLK, merge_in_kernel=True, planned=True)
entry = _HOST.entry
example_args = _HOST.example_args
mla_decode = _HOST.mla_decode
