"""CuTe DSL MLA decode, version 17: cute_v14 (the seesaw on TMA slice barriers, FlashMLA's
order of P@V in a pair's tail) with the score products' wgmma descriptors formed in uniform
registers, one k step at a time: cute_v16's change, applied to the seesaw.

Measured on the H200 (2026-12-05, ``results/20261205T024149Z-NVIDIA-H200.json``): 1-3%
faster than cute_v14 at the three shapes, still behind cute_v15 at decode (devlog). It
compiles for sm_90a on the CPU too (PTX fingerprinted, SASS read from the cubin CuTe DSL
assembles).

**Why the seesaw too.** cute_v16 applies the change to the best measured version (cute_v15,
one warpgroup scoring). The seesaw is FlashMLA's own schedule, and its loops carry more of
these copies: in each warpgroup's loop (a pair of KV tiles) the compiler had hoisted every
descriptor of both stages out of the loop, and as CuTe DSL assembles cute_v14 the two loops
hold 191 and 179 register-to-uniform moves (``R2UR``) against FlashMLA's 10 and 2, with the
same 44 wgmmas per loop (``results/ptx/mla-sass-structure-20261205T014203Z.json``). In a
seesaw each warpgroup's softmax is meant to run under the other's matrix products, so
instructions on a warpgroup's issue path between its wgmmas cost more than in cute_v15,
where warpgroup 1 has little else to issue.

**The change.** ``_scores_sliced`` indexes each shared-memory k step through
:func:`kernels.mla_decode.cute_common.pinned_index` when ``pin_mma_descriptors`` is set (the
rope steps take Q from registers, which stays statically indexed; their K index is pinned).
The P@V products were tried pinned as well: their copies did not change (the ones left are
those of the TMA refills, whose tensor-map address is formed in ordinary registers), so they
are left as in cute_v14. Barrier protocol, loads, order of products: cute_v14's (a test checks
that the P@V and named-barrier order of the PTX is unchanged).

**Checked on the CPU.** As CuTe DSL assembles it, the two loops go from 1,663 and 1,472
instructions to 1,561 and 1,362, and from 191 and 179 ``R2UR`` to 84 and 59; same wgmmas.

**Prediction.** Against cute_v14: 0-5% faster at speculative, where the seesaw's overlap
matters most, and 0-3% at decode; it stays behind cute_v15 at decode unless the copies were
what kept the seesaw from overlapping. Against FlashMLA it removes one of the differences
the compiled code shows, not the hand-overs between the warpgroups, so it should not close
the gap by itself (tensor pipe 61% busy for cute_v14 at speculative, ``ncu-20261204T0304Z``,
against 78.5% for FlashMLA, ``results/profiles/h200/mla_decode--flashmla--speculative.json``).
"""

from kernels.mla_decode.cute_common import VersionHost
from kernels.mla_decode.cute_v10 import M_BLK, N_BLK
from kernels.mla_decode.cute_v14 import _MlaDecodeV14

VERSION = "cute_v17"
DESCRIPTION = (
    "CuTe DSL: cute_v14 with each k step of both warpgroups' score products indexing its "
    "operands through an opaque value, so its wgmma descriptors are built in uniform registers"
)

__all__ = ["DESCRIPTION", "VERSION", "entry", "example_args", "mla_decode"]


class _MlaDecodeV17(_MlaDecodeV14):
    """cute_v14's kernel with ``pin_mma_descriptors`` on (module doc)."""

    pin_mma_descriptors = True


_HOST = VersionHost(VERSION, _MlaDecodeV17(), M_BLK, N_BLK, merge_in_kernel=True, packed=True)
entry = _HOST.entry
example_args = _HOST.example_args
mla_decode = _HOST.mla_decode
