"""CuTe DSL MLA decode, version 19: cute_v18 with each warpgroup posting its new row maximum
and arriving at its hand-over barrier (MAX_A, MAX_B) as soon as the maximum is known, before
the exponentials, the row sums and the O rescale of its softmax.

**Why.** In cute_v17's and cute_v18's warp-stall samples at the speculative shape
(``results/stall-source-20261205T0446Z-NVIDIA-H200-cute_v17.csv.gz`` and
``...0529Z...-cute_v18.csv.gz``, read with ``scripts/stall_ledger.py``) the largest
hand-over wait, 7.1-7.2% of all samples, is warpgroup 1 at MAX_A, waiting for warpgroup 0's
maximum m_a; cute_v18 showed that the P0_READY wait follows the same chain (the two
softmaxes, each behind the other's maximum). Both warpgroups post the maximum only at the
end of their softmax, after 2 x 32 exponentials, the row sums and the 128 multiplies of the O
rescale per thread, none of which the partner needs: it reads only the maximum.

**The change.** ``post_max_first`` on cute_v13's kernel splits the softmax in two
(``softmax_max``: mask, row maximum, the new maximum posted; ``softmax_rest``: P, row sums,
O rescale, the running maximum updated, the arithmetic of cute_v10's softmax unchanged) and
puts the MAX_A arrival (warpgroup 0) and the MAX_B arrival (warpgroup 1) between them. The
shared maxima are safe to post early: the partner reads them only after the arrival, and
each is written again only after a later barrier the partner has passed (module doc of
cute_v13). Everything else is cute_v18's.

**Prediction.** The MAX_A and MAX_B waits shrink (the partner's softmax now overlaps the
rest of one's own), and the P0_READY wait with them; at speculative 2-6% faster than
cute_v18, at decode 0-3%. If the time does not move, the chain is in the products the
warpgroups wait on (wgmma waits, 9.5%), not in the softmax.
"""

from kernels.mla_decode.cute_common import VersionHost
from kernels.mla_decode.cute_v10 import M_BLK, N_BLK
from kernels.mla_decode.cute_v18 import _MlaDecodeV18

VERSION = "cute_v19"
DESCRIPTION = (
    "CuTe DSL: cute_v18 with each warpgroup posting its row maximum and arriving at its "
    "hand-over barrier before the rest of its softmax, which its partner does not need"
)

__all__ = ["DESCRIPTION", "VERSION", "entry", "example_args", "mla_decode"]


class _MlaDecodeV19(_MlaDecodeV18):
    """cute_v18's kernel with ``post_max_first`` on (module doc)."""

    post_max_first = True


_HOST = VersionHost(VERSION, _MlaDecodeV19(), M_BLK, N_BLK, merge_in_kernel=True, packed=True)
entry = _HOST.entry
example_args = _HOST.example_args
mla_decode = _HOST.mla_decode
