"""CuTe DSL MLA decode, version 24: cute_v23 with the evict-first L2 policy on its KV tile
copies kept only in launches where at most two row-block CTAs read each KV tile (decode),
and cute_v22's policy operand 0 where more do (speculative, b=128).

**Why.** cute_v23 marks every KV TMA box ``CacheHintSm90::EVICT_FIRST`` (FlashMLA's policy).
The grid is (row block, split, sequence) with the row block fastest, and the ``s * 128 / 64``
row-block CTAs of one (sequence, split) read the same KV tiles side by side. Where they are
many the hint costs L2 hits: at speculative (b=32, s=16: 32 row blocks) ncu read 238.7 ->
481.2 MB from DRAM and the L2 hit rate fell 86.1% -> 71.5% on the H200
(``ncu-20261205T1954Z-NVIDIA-H200.csv``), 243.1 -> 542.2 MB and 85.5% -> 68.3% on an H100
(``ncu-20261205T1659Z-NVIDIA-H100-80GB-HBM3.csv``): KV lines leave L2 before the other row
blocks read them. The time hardly moved there (compute-bound: -0% per call on the H200, -1%
and +1% in two H100 runs). At decode (2 row blocks) the same counters did not move (155.8 MB
read by both, hit rate ~20%) and the hint gained 1% per call on the H200 and 5% in both H100
runs (on an H100, 2-5% after do_bench's dirty flush and ~1% from a clean L2:
``l2_state_probe``). b=128
(s=2: 4 row blocks) moved +1% on the H200 and 0% / -1% on the H100s, and was not profiled.

**The change.** ``kv_evict_first_max_row_blocks = 2`` on cute_v23's kernel (cute_v13's
class): the KV copies' 64-bit policy operand is chosen per launch, once at the kernel's
start, as ``EVICT_FIRST (0x12F0000000000000) if nctaid.x <= 2 else 0``. ``nctaid.x`` is the
grid's row-block extent, ``rows / 64``: the number of CTAs that share each KV tile. A
run-time select, not a second compile: the kernel is compiled once per (input, output)
dtype and takes ``rows`` (``s * h``) as a run-time argument, so nothing on the host is
specialised per (s, heads). With h = 128 the row blocks are ``2 * s``, so the threshold 2
keeps the hint exactly at s = 1 (decode, at any batch and split count) and drops it for
every s >= 2. Why 2: it is the one row-block count measured with the hint and no extra DRAM
reads (and with a gain in time); 32 is measured to double the reads; 4 (b=128) has no
counters, and its time moved by no more than the spread between runs (cute_v17 moved 3%
at speculative between two H200 runs), so it is put on the side whose L2 behaviour is
measured, cute_v22's. Q (cp.async) and the output
stores are unchanged; everything else is cute_v23's.

**Checked on the CPU.** PTX (both output dtypes): the same 36 ``cp.async.bulk.tensor`` loads
as cute_v23, each with a policy register defined by ``selp.b64 %rd, 1364590687093260288, 0,
%p`` on ``setp.lt.u32 %p, %nctaid.x, 3`` (LLVM recomputes the select next to each copy
rather than keeping one 64-bit register live): evict-first at 1 or 2 row blocks, 0 at 3 or
more. With those three instructions per copy taken out (and cute_v23's constant ``mov``),
every line of cute_v23's PTX is in cute_v24's, in the same order of barriers and products;
cute_v24 has a few dozen more integer instructions (shared-memory address arithmetic that
LLVM recomputes in other blocks instead of carrying). A test reads both PTXs. In the cubin
CuTe DSL's ptxas assembles (read from its ELF, no disassembler here): 238 registers against
cute_v23's 240, and a main kernel 64 (fp32 partials) / 88 (bf16 output) instructions shorter.

**Prediction** (per call against cute_v23, same run; and the counters that would show it).
Decode (b=32, s=1, t=4096): the policy is cute_v23's, -0.5% to +0.5%; DRAM bytes read
unchanged (~155.8 MB). Speculative (b=32, s=16): the policy is cute_v22's, so in ncu DRAM
bytes read back to cute_v22's (200-260 MB, against cute_v23's 481 on the H200 and 542 on the
H100) and the L2 hit rate to 83-88%; the time -1.5% to +1% (compute-bound: cute_v23's
extra traffic did not cost time; under ncu cute_v23's launch was even 1-2% shorter than
cute_v22's, so cute_v24's ncu duration is expected near cute_v22's). b=128 (s=2): cute_v22's
policy, -1.5% to +0.5% (cute_v23's +1% on the H200 given back, if it was real); its DRAM
bytes are not in the session's ncu pass (decode and speculative only).
"""

from kernels.mla_decode.cute_common import VersionHost
from kernels.mla_decode.cute_v10 import M_BLK, N_BLK
from kernels.mla_decode.cute_v23 import _MlaDecodeV23

VERSION = "cute_v24"
DESCRIPTION = (
    "CuTe DSL: cute_v23 with the evict-first L2 policy kept on the KV tile TMA copies only "
    "where at most 2 row-block CTAs share a sequence's tiles (decode), 0 where more do"
)

__all__ = ["DESCRIPTION", "VERSION", "entry", "example_args", "mla_decode"]

# row-block CTAs per (sequence, split) up to which the KV copies stay evict-first
EVICT_FIRST_MAX_ROW_BLOCKS = 2


class _MlaDecodeV24(_MlaDecodeV23):
    """cute_v23's kernel with ``kv_evict_first_max_row_blocks`` = 2 (module doc)."""

    kv_evict_first_max_row_blocks = EVICT_FIRST_MAX_ROW_BLOCKS


_HOST = VersionHost(VERSION, _MlaDecodeV24(), M_BLK, N_BLK, merge_in_kernel=True, packed=True)
entry = _HOST.entry
example_args = _HOST.example_args
mla_decode = _HOST.mla_decode
