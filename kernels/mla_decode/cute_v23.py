"""CuTe DSL MLA decode, version 23: cute_v22 with its KV tile copies issued with the
evict-first L2 cache policy.

**Why.** FlashMLA's sm90 dense decode (``csrc/sm90/decode/dense/splitkv_mla.cuh``) issues
every KV tile box with ``CacheHintSm90::EVICT_FIRST`` (``launch_kv_tiles_copy_tma``) and its
Q copy likewise (``launch_q_copy``); its output stores (a TMA store, or bulk copies of the
split partials) carry none. No
version of ours has given a hint: CuTe DSL 4.3.5 emits ``.L2::cache_hint`` on every TMA
load and, with no ``cache_policy``, passes the policy 0. What the L2 holds while a CTA
streams its KV: the grid is (row block, split, sequence) with the row block fastest, so the
``s * 128 / 64`` row-block CTAs of one sequence (2 at decode, 32 at speculative, 4 at b=128)
run side by side and read the same KV tiles; the first read of a tile comes from HBM and the
others are meant to hit in L2. Q (each CTA's own 64 rows, read once) and the outputs
(written once; at decode the split partials are read back by the merging CTA) pass through
the same L2. cute_v17's ncu profile at speculative on the H200
(``results/ncu-20261205T0242Z-NVIDIA-H200.csv``) reads 237.3 MB from DRAM against 226.5 MB
of KV and Q (each once), L2 hit rate 84.0%; at decode 155.8 MB against 155.7 MB. Evict-first
lines still allocate in L2; they are the first victims when a set needs room. So the hint can
only matter at speculative and b=128, through the ~5% of reads beyond the minimum, and in
either direction: KV lines still wanted by a lagging row block may now go before dead Q and
output lines (a loss; FlashMLA marks its Q evict-first too, so its dead Q lines do not
outrank KV), or the output and other sequences' tiles keep more room (a gain).

**The change.** ``kv_evict_first`` on cute_v13's kernel: each KV ``cp.async.bulk.tensor``
(eight latent boxes and one rope box per tile) carries the 64-bit policy
``0x12F0000000000000`` (CUTLASS's ``CacheHintSm90::EVICT_FIRST``, the value FlashMLA passes)
instead of 0, given to ``cute.copy`` as ``cache_policy`` (CuTe DSL 4.3.5,
``CopyBulkTensorTileG2SNonExecTrait.unpack`` in ``cutlass/cute/nvgpu/cpasync/copy.py``).
Q is loaded by ``cp.async`` in this kernel, whose CuTe DSL atom (``CopyG2SOp``, same file)
takes a cache mode but no L2 policy, so Q keeps none; the output stores are unchanged.
Everything else is cute_v22's.

**Checked on the CPU.** PTX: the same 36 TMA copies, each with the evict-first policy
operand instead of 0, and nothing else different (a test reads cute_v22's and this PTX).

**Prediction.** Small, more likely a loss than a gain: at speculative -2% to +0.5% against
cute_v22 per call, at b=128 -1.5% to +0.5%, at decode -0.5% to +0.5% (its DRAM reads are
already KV and Q once). What would show it: DRAM bytes read and the L2 hit rate of the
kernel at speculative against cute_v22's in the same ncu run.
"""

from kernels.mla_decode.cute_common import VersionHost
from kernels.mla_decode.cute_v10 import M_BLK, N_BLK
from kernels.mla_decode.cute_v22 import _MlaDecodeV22

VERSION = "cute_v23"
DESCRIPTION = (
    "CuTe DSL: cute_v22 with each KV tile TMA copy issued with the evict-first L2 cache "
    "policy (FlashMLA's CacheHintSm90::EVICT_FIRST)"
)

__all__ = ["DESCRIPTION", "VERSION", "entry", "example_args", "mla_decode"]


class _MlaDecodeV23(_MlaDecodeV22):
    """cute_v22's kernel with ``kv_evict_first`` on (module doc)."""

    kv_evict_first = True


_HOST = VersionHost(VERSION, _MlaDecodeV23(), M_BLK, N_BLK, merge_in_kernel=True, packed=True)
entry = _HOST.entry
example_args = _HOST.example_args
mla_decode = _HOST.mla_decode
