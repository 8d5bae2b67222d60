"""CuTe DSL MLA decode, version 12: cute_v11 with one transaction mbarrier per 64-column slice.

**What changed from cute_v11.** In v11 the nine TMA boxes of a KV tile (eight 64-column latent
boxes and the rope box, 64 rows each) all complete on one mbarrier per stage, and all 256
threads wait for the whole 72 KB tile before the CTA barrier at the top of the step, so the
score product starts only when the last box has landed. Here each box has its own mbarrier
(nine per stage), and the score product waits for a slice just before the four k16 wgmma
steps that read it: the product runs on slice 0 while slices 1-8 are still arriving. Warpgroup
1, which only needs the latent columns (the V^T view, for its half of P@V), waits for the eight
latent slices after the CTA barrier, before P@V; warpgroup 0 has seen all nine by then. The
producer warp, the CTA barrier per step, the softmax, P@V, the epilogue and the split merge are
v11's / v7's, unchanged. The code is v11's kernel with these methods overridden:
``KV_BARRIERS``, ``make_latent_tma`` / ``partition_latent_tma`` (one 64 x 64 box per copy),
``tma_load_kv`` (one expect-tx and one copy per slice), ``wait_tile`` (the partial tile
only), ``slice_ready`` (the score product's per-slice wait) and ``wait_v``.

**Barrier protocol (nine mbarriers per stage).**

- ``s_full[9 s + j]`` for stage s = 0, 1 and slice j = 0..8 (j < 8: latent columns
  ``[64 j, 64 j + 64)``; j = 8: the 64 rope columns), 8 bytes each, initialised by thread 0
  with an arrival count of 1, then ``fence.mbarrier_init`` and a CTA barrier before any use.
- Producer: the first warp of warpgroup 1, all 32 lanes converged (CuTe DSL 4.3.5 wraps a TMA
  copy in ``elect.sync`` over the whole warp; a one-thread branch around it hangs, see
  cute_v11). For each slice in the order 0..8, its elected lane arrives on the slice's barrier
  with ``expect_tx`` of 64 rows x 64 columns x 2 bytes = 8,192 bytes, and the warp issues that
  slice's ``cp.async.bulk.tensor`` with the same barrier as its completion barrier. TMA counts
  the whole box even for rows it zero-fills (rows >= t_max), so every slice expects 8,192
  bytes on every tile; a phase completes when its one arrival and its 8,192 bytes are in.
- Tile ``step`` of a CTA goes to stage ``step % 2``, as its ``step // 2``-th fill, so a waiter
  waits for parity ``(step // 2) % 2`` on each of that stage's barriers. Warpgroup 0 waits on
  all nine, slice j just before the wgmma steps ``4 j .. 4 j + 3`` (the rope slice before the
  rope steps). Warpgroup 1 waits on the eight latent barriers before P@V; it never waits on
  the rope barrier (it never reads those columns).
- Stage reuse, as in v11: tile ``step + 1`` is issued into the stage of tile ``step - 1`` only
  after the CTA barrier at the top of step ``step``. Every thread passes that barrier after
  its step-1 wgmmas completed (``wgmma.wait_group 0``) and after its own waits on that stage's
  previous phase (warpgroup 0: nine barriers, warpgroup 1: eight), so no barrier runs more than
  one phase ahead of a thread that waits on it, and TMA never overwrites bytes a wgmma may
  still read. Tile ``step + 1`` is issued only if ``step + 1 < n_steps``, so every issued copy
  is waited on before the CTA exits.
- The partial tile (the sequence ends inside it). Rows past the sequence's length hold
  arbitrary cache data (NaN in the tests); their scores are masked to -inf (assigned, so a NaN
  score is replaced), but P = 0 times a NaN V row would still poison O. So, as in v11, those
  rows of the 512 latent columns are zeroed before any wgmma reads them: on that tile only (a
  uniform branch), warpgroup 1 waits for the eight latent slices *before* the CTA barrier,
  writes the zeros, then ``fence.proxy.async.shared::cta`` and the CTA barrier. Warpgroup 0
  passes that barrier only after the zeros are written, so on the partial tile its score
  product does not overlap the loads: v11's behaviour, on at most one tile per sequence (none
  at t = 4096, a multiple of 64). Zeroing after the CTA barrier instead would race with
  warpgroup 0's wgmma reading the same rows (harmless for masked scores, but a race); waiting
  for one slice and zeroing it just before its wgmmas would need the zeros written by
  warpgroup 0 inside its score product, on its critical path.

**Shared memory.** v11's plan with 18 mbarriers (144 bytes) instead of 2 (16 bytes): Q 64 KB +
8 KB, two KV stages of 72 KB, P 8 KB, row corrections and sums 512 B, merge flag 16 B, then
the mbarriers at bytes 229,904-230,047. ``SharedStorage.size_in_bytes()`` at trace time is
230,400 bytes, as in v11 (the extra 128 bytes fall in the struct's end padding), of the
232,448 an sm_90 CTA may use.

**Registers.** ptxas (CUDA 13.0, ``ptxas -arch=sm_90a -v`` on this module's PTX, CPU only)
reports more registers per thread than for v11 and no spills; shared memory already limits
the SM to one CTA, so occupancy does not change. The GPU run's profile records the count of
the toolchain that launches it. Each slice wait is followed by ``wgmma.fence``: without it
ptxas inserts one itself after every wait (its info C7519), since the wait's spin loop sits
between wgmmas that accumulate into the same registers.

**Prediction.** The tensor-core work per tile is unchanged (~2,180 cycles at peak, see
cute_v10). What moves is when warpgroup 0 can start the score product of tile n: in v7/v11 the
whole 72 KB tile has to be in, here its first 8 KB. The next tile is issued a whole step ahead
(one CTA barrier per step, as in v11), so in the steady state a tile is often complete before
its step starts and the per-slice waits find finished phases; the gain is limited to steps
whose load is late, and at most the score product's share of a step (about half the tensor
work) can overlap the tail of a load. Decode (tiles from DRAM, low L2 hit rate, the longer
steps per tile of the two): cute_v12 0-5% faster than cute_v11 on GPU time, i.e. close to
cute_v7, not past it (v11's host-side tensor-map encoding per call stays). Speculative (tiles
from L2, 32 row-block CTAs share each tile): within +-2% of cute_v11, the loads are rarely
late there. Nine try_wait polls and fences per tile for warpgroup 0 instead of one cost a few
tens of cycles per tile. FlashMLA's larger gain from per-slice barriers comes together with a
producer that runs ahead on an empty/full barrier ring and no CTA barrier per tile; this
version keeps v11's CTA barrier, so it tests the per-slice barrier alone.
"""

from typing import Any

import cutlass
import cutlass.cute as cute
from cutlass.cute.nvgpu import cpasync, warpgroup

from kernels.mla_decode.cute_common import (
    VersionHost,
)

# v2's block sizes
from kernels.mla_decode.cute_v2 import D_LAT, D_ROPE, M_BLK, N_BLK, STAGES
from kernels.mla_decode.cute_v11 import _MlaDecodeV11

VERSION = "cute_v12"
DESCRIPTION = (
    "CuTe DSL: cute_v11 with one transaction mbarrier per 64-column KV slice (nine per stage); "
    "the score product waits for each slice just before the wgmmas that read it"
)

LATENT_SLICES = D_LAT // D_ROPE  # 8 boxes of 64 columns; slice 8 is the rope box
SLICES = LATENT_SLICES + 1


class _MlaDecodeV12(_MlaDecodeV11):
    """v11's kernel with a barrier per 64-column slice of a stage (see the module doc)."""

    KV_BARRIERS = SLICES

    def make_latent_tma(self, m_kv_tma: cute.Tensor, s_kl_layout: Any) -> tuple[Any, Any]:
        """One 64 x 64 box per copy (issued eight times per tile, each slice on its own
        barrier); a 64-column slice of a latent stage has this 128-byte-swizzled layout."""
        atom = warpgroup.make_smem_layout_atom(
            warpgroup.SmemLayoutAtomKind.K_SW128, m_kv_tma.element_type
        )
        return cpasync.make_tiled_tma_atom(
            cpasync.CopyBulkTensorTileG2SOp(),
            m_kv_tma,
            cute.tile_to_shape(atom, (N_BLK, D_ROPE), (0, 1)),
            (N_BLK, D_ROPE),
        )

    def partition_latent_tma(
        self, tma_kl: cute.CopyAtom, g_kl_tma: cute.Tensor, s_kl: cute.Tensor, bi: cutlass.Int32
    ) -> tuple[Any, Any]:
        """((box), (1, slice, stage)) in shared memory, ((box), tile, column slice) of
        sequence ``bi`` in global memory (slices 0-7 are the latent columns)."""
        return cpasync.tma_partition(
            tma_kl,
            0,
            cute.make_layout(1),
            cute.zipped_divide(s_kl, (N_BLK, D_ROPE)),
            cute.group_modes(
                cute.local_tile(g_kl_tma[None, None, bi], (N_BLK, D_ROPE), (None, None)), 0, 2
            ),
        )

    @cute.jit
    def tma_load_kv(
        self,
        tma_kl: cute.CopyAtom,
        tma_kr: cute.CopyAtom,
        t_gkl: cute.Tensor,
        t_skl: cute.Tensor,
        t_gkr: cute.Tensor,
        t_skr: cute.Tensor,
        s_full: cute.Pointer,
        tile: cutlass.Int32,
        stage: cutlass.Int32,
    ):
        """Called by all 32 lanes of one warp (converged): for each 64-column slice in the
        order the score product reads them, the elected lane arms the slice's barrier for one
        box (64 x 64 x 2 bytes) and the warp issues that box's copy on it."""
        slice_bytes = N_BLK * D_ROPE * (t_skl.element_type.width // 8)
        for j in cutlass.range_constexpr(LATENT_SLICES):
            bar = s_full + (stage * SLICES + j)
            with cute.arch.elect_one():
                cute.arch.mbarrier_arrive_and_expect_tx(bar, slice_bytes)
            cute.copy(tma_kl, t_gkl[None, tile, j], t_skl[None, (0, j, stage)], tma_bar_ptr=bar)
        bar = s_full + (stage * SLICES + LATENT_SLICES)
        with cute.arch.elect_one():
            cute.arch.mbarrier_arrive_and_expect_tx(bar, slice_bytes)
        cute.copy(tma_kr, t_gkr[None, tile], t_skr[None, stage], tma_bar_ptr=bar)

    @cute.jit
    def wait_latent(self, s_full: cute.Pointer, stage: cutlass.Int32, step: cutlass.Int32):
        """Wait for the eight latent slices of tile ``step`` (in ``stage``)."""
        for j in cutlass.range_constexpr(LATENT_SLICES):
            cute.arch.mbarrier_wait(s_full + (stage * SLICES + j), (step // STAGES) % 2)

    @cute.jit
    def wait_tile(
        self,
        s_full: cute.Pointer,
        stage: cutlass.Int32,
        step: cutlass.Int32,
        valid: cutlass.Int32,
        wg: cutlass.Int32,
        t_skl: cute.Tensor,
        t_ckv: cute.Tensor,
    ):
        """Before the CTA barrier: nothing, except on the partial tile, where warpgroup 1
        waits for the latent slices and zeroes V's rows past the sequence's end."""
        if valid < N_BLK:  # noqa: SIM102 (nested: dynamic conditions)
            if wg == 1:
                self.wait_latent(s_full, stage, step)
                self.zero_tail(t_skl, t_ckv, stage, valid)

    def slice_ready(self, s_full: cute.Pointer, stage: cutlass.Int32, step: cutlass.Int32) -> Any:
        """The score product's hook: before the wgmmas that read slice ``j``, wait for it."""
        base = s_full + stage * SLICES
        phase = (step // STAGES) % 2

        def wait(j: int) -> None:
            cute.arch.mbarrier_wait(base + j, phase)
            # the wait is a spin loop between wgmmas that accumulate into the same registers:
            # without this fence ptxas injects one itself (info C7519), as CUTLASS's mainloops
            # place it after each pipeline wait
            warpgroup.fence()

        return wait

    @cute.jit
    def wait_v(
        self, s_full: cute.Pointer, stage: cutlass.Int32, step: cutlass.Int32, wg: cutlass.Int32
    ):
        """Before P@V: warpgroup 1 waits for the latent slices (warpgroup 0 waited for every
        slice in its score product)."""
        if wg == 1:
            self.wait_latent(s_full, stage, step)


_HOST = VersionHost(VERSION, _MlaDecodeV12(), M_BLK, N_BLK, merge_in_kernel=True, packed=True)
entry = _HOST.entry
example_args = _HOST.example_args
mla_decode = _HOST.mla_decode
