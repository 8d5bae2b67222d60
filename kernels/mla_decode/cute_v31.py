"""CuTe DSL MLA decode, version 31: cute_v30 with a merge whose sum does not depend on which
split arrives last, so the split kernel gives the same bits on every call.

**Why.** From cute_v26 on, the last split CTA to arrive merges the others' fp32 partials into
the O it still holds in registers: its own O times ``2^(lse - top)`` first, then each other
split in split order as ``fma(part, w, acc)`` (the PTX: 64 ``fma.rn.f32`` a split on the
accumulator). Which CTA arrives last is a race, and the sum's first term is rounded once
(a product) where every later one is rounded inside an ``fma``, so the same inputs give a
different last bit of the fp32 sum depending on the arrival order, and now and then a
different bf16 output. ``kernels.mla_decode.repeat_probe`` saw exactly that on an H100
(``repeat-probe-20261207T083500Z-NVIDIA-H100-80GB-HBM3.json``): with several splits cute_v27
to cute_v30 each gave 2 to 20 distinct outputs in 20 calls on one set of inputs, at most 11
of 2M elements apart by at most 4.9e-4; with one split (no merge) one output each. cute_v25,
which stored every split and merged from global memory in split order, did not depend on the
arrival order (it was not probed). Run-to-run variation is a defect for any user who checks
a kernel's output against itself (batch-invariant or deterministic inference, regression
tests, reproducible training), and the split kernel serves decode.

**The change** (the split kernel's merge only, :meth:`merge_from_registers`). Both sums go
in split order whoever merges: ``den`` is ``0 + w_0 + w_1 + ...`` and each row of O is
``fma(x_{S-1}, w_{S-1}, ... fma(x_0, w_0, 0))``, where ``x_sp`` is loaded from the split's
fp32 partial, or, for the merging CTA's own split, copied from its registers (the same fp32
values it would have stored), through the one ``fma`` site either way. Rows go one at a time
(2 a thread), each with its own 64-register sum, so the loads of one row's partials are not
overlapped with the other row's (cute_v26 to cute_v30 loaded both rows of a split together):
one more dependent round trip to L2 a split for the merging CTA. The one-split kernel (bf16
output: speculative, b=128) is cute_v30's PTX; only the fp32 kernel changes.

**Prediction** (same bench run, cute_v30 beside it). Repeat probe: one distinct output in 20
calls at every shape, and equal bits to any other deterministic merge in split order.
Decode (b=32, s=1, t=4096: 2 splits, one other partial a row): within +0% to +1.5% of cute_v30
per call (one extra ~1 us round trip on the merging CTA's tail, partly hidden behind the
other CTAs still in their loops); speculative and b=128 within +-1% (the same PTX). Wrong if
the probe still finds several outputs (then the arrival order is not the only source) or if
decode loses more than 2% (then the merge tail is on the critical path more than read).
"""

from typing import Any

import cutlass
import cutlass.cute as cute

from kernels.mla_decode.cute_common import VersionHost, mn_view
from kernels.mla_decode.cute_v10 import D_HALF, M_BLK, N_BLK, WG_THREADS
from kernels.mla_decode.cute_v30 import _MlaDecodeV30

VERSION = "cute_v31"
DESCRIPTION = (
    "CuTe DSL: cute_v30 with the split merge summed in split order whichever CTA merges, "
    "so the split kernel (decode) gives the same bits on every call"
)

__all__ = ["DESCRIPTION", "VERSION", "entry", "example_args", "mla_decode"]


class _MlaDecodeV31(_MlaDecodeV30):
    """cute_v30's kernel with an arrival-order-independent merge (module doc)."""

    @cute.jit
    def merge_from_registers(
        self,
        m_o: cute.Tensor,
        m_lse: cute.Tensor,
        m_out: cute.Tensor,
        m_block: cutlass.Int32,
        split: cutlass.Int32,
        bi: cutlass.Int32,
        acc_o: cute.Tensor,
        lse: cute.Tensor,
        thr_pv_rs: Any,
        t_cs: cute.Tensor,
        s_q: cute.Tensor,
    ):
        """The last arriver's merge in split order: ``top`` = max of the LSEs (order-free);
        then per row of this thread, from split 0 up, the weight added to ``den`` and the
        weighted partial to the row's sum by one ``fma`` site, this split's values taken
        from its registers; then ``sum * rcp(den)`` back into ``acc_o``, stored as cute_v30
        stores (:meth:`store_merged`)."""
        tidx, _, _ = cute.arch.thread_idx()
        wg = tidx // WG_THREADS
        n_rows = cute.size(t_cs, mode=[0])
        splits = m_lse.shape[1]
        acc_o_mn = mn_view(acc_o)
        top = cute.make_rmem_tensor((n_rows,), cutlass.Float32)
        for r in cutlass.range_constexpr(n_rows):
            top[r] = lse[r]
        for sp in cutlass.range(splits, unroll=1):
            if sp != split:
                for r in cutlass.range_constexpr(n_rows):
                    row = m_block * M_BLK + t_cs[r, 0][0]
                    top[r] = cute.arch.fmax(top[r], m_lse[bi, sp, row])
        half = cute.size(acc_o_mn, mode=[1]) // 2
        part = cute.make_rmem_tensor((half,), cutlass.Float32)
        total = cute.make_rmem_tensor((half,), cutlass.Float32)
        for r in cutlass.range_constexpr(n_rows):
            row = m_block * M_BLK + t_cs[r, 0][0]
            for h in cutlass.range_constexpr(2):
                own = cute.local_tile(acc_o_mn[r, None], (half,), (h,))
                total.fill(0.0)
                den = cutlass.Float32(0.0)
                for sp in cutlass.range(splits, unroll=1):
                    l_sp = lse[r]
                    if sp == split:
                        part.store(own.load())
                    else:
                        l_sp = m_lse[bi, sp, row]
                        g_p = cute.local_tile(
                            m_o[bi, sp, None, None], (M_BLK, D_HALF), (m_block, wg)
                        )
                        t_p = mn_view(thr_pv_rs.partition_C(g_p))
                        cute.autovec_copy(cute.local_tile(t_p[r, None], (half,), (h,)), part)
                    w = cute.math.exp2(l_sp - top[r], fastmath=True)
                    den = den + w
                    total.store(total.load() + part.load() * w)
                own.store(total.load() * cute.arch.rcp_approx(den))
        self.store_merged(m_out, m_block, bi, acc_o, thr_pv_rs, s_q)


_HOST = VersionHost(VERSION, _MlaDecodeV31(), M_BLK, N_BLK, merge_in_kernel=True, packed=True)
entry = _HOST.entry
example_args = _HOST.example_args
mla_decode = _HOST.mla_decode
