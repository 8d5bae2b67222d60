"""CuTe DSL MLA decode, version 4: v3 plus the split-KV merge as a second kernel of the same call.

cute_v3 returns to Python between the attention kernel and the merge of the split-KV partials
(a separate Triton launch). At decode sizes the GPU work is ~100 us or less, so the host time
of each launch shows up in the measured time. Here the ``@cute.jit`` entry launches both
kernels back to back on the stream: one Python call, one argument conversion.

The merge kernel: one CTA of 128 threads per query row; every thread reads the row's split
log-sum-exps (base 2), and merges 4 adjacent output columns of all splits with 16-byte loads.
The attention kernel is v3's unchanged (inherited from its class).
"""

import cuda.bindings.driver as cuda
import cutlass
import cutlass.cute as cute

from kernels.mla_decode import reference as ref
from kernels.mla_decode.cute_common import (
    VersionHost,
    mla_out_tensor,
)
from kernels.mla_decode.cute_v3 import M_BLK, N_BLK, _MlaDecodeV3

VERSION = "cute_v4"
DESCRIPTION = (
    "CuTe DSL: v3 with the split-KV merge launched from the same compiled call "
    "(no second Python launch)"
)

MERGE_THREADS = 128  # merge kernel: one CTA per query row
MERGE_VEC = ref.D_V // MERGE_THREADS  # 4 fp32 columns (16 bytes) per thread


class _MlaDecodeV4(_MlaDecodeV3):
    """v3's attention kernel and KV loader; the entry also takes the output pointer and, when
    the KV is split, launches :meth:`merge_kernel` after the attention kernel."""

    @cute.jit
    def __call__(
        self,
        p_q: cute.Pointer,
        p_kv: cute.Pointer,
        p_lens: cute.Pointer,
        p_o: cute.Pointer,
        p_lse: cute.Pointer,
        p_out: cute.Pointer,
        batch: cutlass.Int32,
        rows: cutlass.Int32,
        t_max: cutlass.Int32,
        splits: cutlass.Int32,
        tiles_per_split: cutlass.Int32,
        scale_log2: cutlass.Float32,
        stream: cuda.CUstream,
    ):
        m_o, m_lse = self.launch_attention(
            p_q,
            p_kv,
            p_lens,
            p_o,
            p_lse,
            batch,
            rows,
            t_max,
            splits,
            tiles_per_split,
            scale_log2,
            stream,
        )
        if cutlass.const_expr(p_o.dtype == cutlass.Float32):  # split partials: merge them
            m_out = mla_out_tensor(p_out, batch, rows)
            self.merge_kernel(m_o, m_lse, m_out).launch(
                grid=(rows, batch, 1), block=[MERGE_THREADS, 1, 1], stream=stream
            )

    @cute.kernel
    def merge_kernel(self, m_o: cute.Tensor, m_lse: cute.Tensor, m_out: cute.Tensor):
        """out[b, row] = sum_s w_s O_s[b, row] / sum_s w_s, w_s = 2^(lse_s - max lse)."""
        tidx, _, _ = cute.arch.thread_idx()
        row, bi, _ = cute.arch.block_idx()
        splits = m_lse.shape[1]
        top = -cutlass.Float32.inf
        for sp in range(splits):
            top = cute.arch.fmax(top, m_lse[bi, sp, row])
        acc = cute.make_rmem_tensor((MERGE_VEC,), cutlass.Float32)
        acc.fill(0.0)
        part = cute.make_rmem_tensor((MERGE_VEC,), cutlass.Float32)
        den = cutlass.Float32(0.0)
        for sp in range(splits):
            w = cute.math.exp2(m_lse[bi, sp, row] - top, fastmath=True)
            den = den + w
            src = cute.local_tile(m_o[bi, sp, row, None], (MERGE_VEC,), (tidx,))
            cute.autovec_copy(src, part)
            acc.store(acc.load() + part.load() * w)
        res = cute.make_rmem_tensor((MERGE_VEC,), m_out.element_type)
        res.store((acc.load() * cute.arch.rcp_approx(den)).to(m_out.element_type))
        cute.autovec_copy(res, cute.local_tile(m_out[bi, row, None], (MERGE_VEC,), (tidx,)))


_HOST = VersionHost(VERSION, _MlaDecodeV4(), M_BLK, N_BLK, fused_merge=True)
entry = _HOST.entry
example_args = _HOST.example_args
mla_decode = _HOST.mla_decode
