"""CuTe DSL MLA decode, version 30: cute_v29's hand-over order in the one-split kernel only;
the split kernel goes back to cute_v28's.

**Why** (measured on an H100, ``20261207T075250Z-NVIDIA-H100-80GB-HBM3.json``, one bench run
of FlashMLA, cute_v27, cute_v28 and cute_v29). cute_v29 posts P0 before warpgroup 0 waits for
its own P_a V_a, in both kernels the loop serves. In the one-split bf16 kernel it paid: per
call against cute_v28, speculative (b=32, s=16, t=4096) 997.7 -> 962.8 us (-3.5%), b=128
517.3 -> 493.1 us (-4.7%), and warpgroup 1's wait at P0_READY fell from 5.91 samples a CTA
to 0.42 (``stall-source-20261207T0752Z-NVIDIA-H100-80GB-HBM3-cute_v29-speculative.csv.gz``).
In the split fp32 kernel (decode, b=32, s=1) it cost: 83.3 -> 85.5 us (+2.7%; graph replay
+2.6%), where cute_v27 and cute_v28, one fp32 kernel, were 0.8% apart. The likely reason
(inferred; no decode samples of cute_v29 were taken): at decode the KV tiles come from DRAM,
and the early post delays the stage-0 refill until after the P0 arrival and P_a V_a's
completion, so the copy has less time in flight before the next score product polls it.

**The change.** ``p0_before_own_pv_wait_in_split = False`` on cute_v29's kernel class: the
kernel writing fp32 partials (several splits) traces cute_v28's order (wait for P_a V_a,
refill stage 0, then MAX_B and the P0 post); the one writing bf16 (one split) traces
cute_v29's. The choice is made in Python while tracing, from the output's element type, so
each PTX is one of the two measured ones: the fp32 PTX is cute_v28's and the bf16 PTX is
cute_v29's, line for line up to the kernel's name (tests). Which kernel a shape runs is the
launch plan's choice, unchanged.

**Prediction** (same bench run, cute_v28 and cute_v29 beside it): decode within +-1% of
cute_v28 and 1.5% to 4% faster than cute_v29; speculative and b=128 within +-1% of cute_v29.
Wrong if decode stays within 1% of cute_v29 (then the decode loss was not the loop order but
launch-to-launch drift, and cute_v29 was never slower there).
"""

from kernels.mla_decode.cute_common import VersionHost
from kernels.mla_decode.cute_v10 import M_BLK, N_BLK
from kernels.mla_decode.cute_v29 import _MlaDecodeV29

VERSION = "cute_v30"
DESCRIPTION = (
    "CuTe DSL: cute_v29's early P0 post in the one-split bf16 kernel (speculative, b=128), "
    "cute_v28's wait-and-refill-first order in the split fp32 kernel (decode)"
)

__all__ = ["DESCRIPTION", "VERSION", "entry", "example_args", "mla_decode"]


class _MlaDecodeV30(_MlaDecodeV29):
    """cute_v29's kernel with ``p0_before_own_pv_wait_in_split`` off (module doc)."""

    p0_before_own_pv_wait_in_split = False


_HOST = VersionHost(VERSION, _MlaDecodeV30(), M_BLK, N_BLK, merge_in_kernel=True, packed=True)
entry = _HOST.entry
example_args = _HOST.example_args
mla_decode = _HOST.mla_decode
