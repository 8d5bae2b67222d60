"""Shared pieces of the CuTe DSL MLA decode versions (``cute_v*.py``).

- :func:`compile_ptx`: compile a CuTe DSL entry point for a target arch WITHOUT a GPU and return
  its PTX. CuTe DSL writes the PTX file (``--keep-ptx``) before it looks for the CUDA driver to
  load the module, so on a CPU-only machine the driver error that follows is expected and ignored.
- :func:`compile_kernel`: ``cute.compile`` keeping the sha256 of the launched PTX
  (:func:`launched_ptx_sha256`; recorded in :data:`LAST_INFO` as ``ptx_sha256``).
- :func:`run_split_kv`: the host side of every version (checks, KV split, launch, and the merge
  of split-KV partials: by the Triton ladder's combine kernel for v1-v3, inside the compiled
  call for v4+; base-2 log-sum-exp weights).
- :class:`VersionHost`: what a version module exports around its kernel object (``entry``,
  ``example_args``, the cached compiles, ``mla_decode``), so a module keeps only its kernel.
- :class:`PackedLaunch` / :func:`check_packing`: launch with pre-built ctypes arguments (v5).
- :func:`num_sms` and :func:`pick_splits`: how many KV splits fill the GPU.
- :func:`mla_global_tensors`, :func:`mla_smem_layouts`, :func:`g2s_tiled_copy`,
  :func:`wgmma_tiled`, :func:`mla_out_tensor`, :func:`mla_counters_tensor`: what the
  ``@cute.jit`` entries build on the host before a launch (traced; the kernels receive them).
- :func:`kv_tile_range`, :func:`cta_gmem_tiles`, :func:`mla_smem_tensors`,
  :func:`g2s_partitions`: the start of every attention kernel (its KV tiles, its views of
  global and shared memory, its slices of the cp.async copies); :func:`qk_scores`: the score
  product from shared memory; :func:`wgmma_smem_operands`, :func:`softmax_state`: the
  operands of the two products and the online softmax's running state.
- :func:`mn_view`, :func:`acc_as_wgmma_a`, :func:`quad_allreduce`: register-fragment helpers for
  the online softmax over ``mma.sync`` / ``wgmma`` accumulators.
"""

from __future__ import annotations

import ctypes
import functools
import math
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

import torch

LOG2_E = 1.4426950408889634

# The last call's launch shape (read by kbopt's ncu target to label the kernels ncu sees: with
# splits > 1 a call launches the attention kernel and then a merge kernel, unless the
# attention kernel merges in place) and the fingerprint of the launched PTX (``ptx_sha256``;
# the benchmark's rows carry all of it as ``kernel_*`` columns).
LAST_INFO: dict[str, int | str] = {}


def _compile_dump(
    entry: Callable[..., Any], args: tuple[Any, ...], arch: str, suffix: str
) -> list[bytes]:
    """Compile ``entry(*args)`` for ``arch`` with CuTe DSL keeping its intermediate files, and
    return the contents of the kept files named ``*.{arch}.{suffix}``, in name order."""
    import cutlass.cute as cute

    keep = "--keep-ptx --keep-cubin" if suffix == "cubin" else "--keep-ptx"
    with tempfile.TemporaryDirectory(prefix="cute_ptx_") as tmp:
        error: Exception | None = None
        try:
            cute.compile(entry, *args, options=f"{keep} --gpu-arch {arch} --dump-dir {tmp}")
        except Exception as exc:  # no driver here: the module cannot be loaded, files are on disk
            error = exc
        found = sorted(Path(tmp).glob(f"*.{arch}.{suffix}"))
        if not found:
            raise RuntimeError(f"CuTe DSL produced no {suffix} for {arch}") from error
        return [p.read_bytes() for p in found]


def compile_ptx(entry: Callable[..., Any], *args: Any, arch: str = "sm_90a") -> str:
    """Compile ``entry(*args)`` (a ``@cute.jit`` callable) for ``arch`` and return the PTX text.

    Works on a machine without a GPU: the PTX is dumped before CuTe DSL initialises the driver.
    """
    return "\n".join(data.decode() for data in _compile_dump(entry, args, arch, "ptx"))


def compile_cubin(entry: Callable[..., Any], *args: Any, arch: str = "sm_90a") -> bytes:
    """The cubin CuTe DSL assembles for ``entry(*args)`` with its own ptxas (no GPU needed, as
    for :func:`compile_ptx`): what runs, for reading its SASS with ``cuobjdump -sass``."""
    kept = _compile_dump(entry, args, arch, "cubin")
    if len(kept) != 1:
        raise RuntimeError(f"CuTe DSL kept {len(kept)} cubins for {arch}, expected one")
    return kept[0]


# sha256 of the normalised PTX (kernels.mla_decode.ptx_fingerprints) of each function compiled
# by compile_kernel, by id(): compiled functions live for the process (functools.cache).
_PTX_SHA256: dict[int, str] = {}


def compile_kernel(entry: Callable[..., Any], *args: Any, arch: str | None = None) -> Any:
    """``cute.compile(entry, *args)`` that keeps the fingerprint of the PTX it built.

    Every version compiles its launched kernels here. ``--keep-ptx`` only adds a copy of the
    PTX on the way to the cubin (same cubin with and without it, checked with CuTe DSL 4.3.5);
    its sha256 is then what :func:`launched_ptx_sha256` returns for the compiled function and
    what the benchmark records as ``kernel_ptx_sha256``. ``arch``: default, the GPU's.
    """
    import cutlass.cute as cute

    from kernels.mla_decode.ptx_fingerprints import ptx_sha256

    options = "--keep-ptx" + (f" --gpu-arch {arch}" if arch else "")
    with tempfile.TemporaryDirectory(prefix="cute_ptx_") as tmp:
        fn = cute.compile(entry, *args, options=f"{options} --dump-dir {tmp}")
    ptx = getattr(fn, "__ptx__", None)  # read into memory by CuTe DSL when compiling
    if isinstance(ptx, str) and ".target" in ptx:
        _PTX_SHA256[id(fn)] = ptx_sha256(ptx)
    return fn


def launched_ptx_sha256(fn: Any) -> str | None:
    """The PTX fingerprint of a function compiled by :func:`compile_kernel` (None if CuTe DSL
    did not hand back its PTX)."""
    return _PTX_SHA256.get(id(fn))


@functools.cache
def _num_sms(index: int) -> int:
    return int(torch.cuda.get_device_properties(index).multi_processor_count)


def num_sms(device: torch.device | None = None) -> int:
    """Multiprocessors of the GPU (cached: the property query costs host time per call)."""
    dev = device or torch.device("cuda")
    return _num_sms(dev.index if dev.index is not None else torch.cuda.current_device())


def pick_splits(ctas_without_split: int, n_tiles: int, sms: int) -> tuple[int, int]:
    """Split the KV tiles so that about one wave of CTAs covers the GPU.

    Returns ``(splits, tiles_per_split)``; every split gets at least one tile.
    """
    want = max(1, min(n_tiles, sms // max(1, ctas_without_split)))
    per_split = math.ceil(n_tiles / want)
    return math.ceil(n_tiles / per_split), per_split


# ---------------------------------------------------------------------------------------------
# Host side shared by all versions: every version's @cute.jit entry takes
#   (p_q, p_kv, p_lens, p_o, p_lse, batch, rows, t_max, splits, tiles_per_split, scale_log2, stream)
# with o [b, splits, rows, 512] (fp32 partials, or q's dtype when splits == 1) and the base-2
# LSE [b, splits, rows] fp32.
# ---------------------------------------------------------------------------------------------

_TORCH_TO_CUTE: dict[torch.dtype, str] = {torch.bfloat16: "BFloat16", torch.float16: "Float16"}


def _gmem_ptr(dtype: Any, address: int, align: int) -> Any:
    import cutlass.cute as cute
    from cutlass.cute.runtime import make_ptr

    return make_ptr(dtype, address, cute.AddressSpace.gmem, assumed_align=align)


def launch_args_template(
    in_dtype: Any,
    out_dtype: Any,
    m_blk: int,
    n_blk: int,
    *,
    with_out: bool = False,
    with_sem: bool = False,
) -> tuple[Any, ...]:
    """Arguments that fix a compiled signature: placeholder addresses, types, a fake stream.

    ``with_out``: the entry also takes the final output pointer (versions that merge the
    split-KV partials inside the compiled call), right after the LSE pointer.
    ``with_sem``: then one more pointer, int32 arrival counters (see :func:`merge_counters`).
    """
    import cutlass
    import cutlass.cute as cute

    fake = 1 << 20  # any 16-byte aligned address: only the types are traced
    out = (_gmem_ptr(in_dtype, fake, 16),) if with_out else ()
    sem = (_gmem_ptr(cutlass.Int32, fake, 4),) if with_sem else ()
    return (
        _gmem_ptr(in_dtype, fake, 16),
        _gmem_ptr(in_dtype, fake, 16),
        _gmem_ptr(cutlass.Int32, fake, 4),
        _gmem_ptr(out_dtype, fake, 16),
        _gmem_ptr(cutlass.Float32, fake, 4),
        *out,
        *sem,
        cutlass.Int32(1),
        cutlass.Int32(m_blk),
        cutlass.Int32(n_blk),
        cutlass.Int32(1),
        cutlass.Int32(1),
        cutlass.Float32(1.0),
        cute.runtime.make_fake_stream(),
    )


def check_query(version: str, q: torch.Tensor, m_blk: int) -> int:
    """Raise ValueError unless the CuTe versions can take ``q``; return its rows (s * h)."""
    if q.dtype not in _TORCH_TO_CUTE:
        raise ValueError(f"{version} supports bf16/fp16, got {q.dtype}")
    if not q.is_cuda:
        raise ValueError(f"{version} needs CUDA tensors")
    rows = q.shape[1] * q.shape[2]
    if rows % m_blk:
        raise ValueError(f"{version} needs s*h to be a multiple of {m_blk}, got {rows}")
    return int(rows)


def run_split_kv(
    version: str,
    compiled: Callable[[Any, Any], Any],
    m_blk: int,
    n_blk: int,
    q: torch.Tensor,
    kv_cache: torch.Tensor,
    cache_seqlens: torch.Tensor,
    sm_scale: float,
    *,
    fused_merge: bool = False,
    merge_in_kernel: bool = False,
    packed: bool = False,
) -> torch.Tensor:
    """Check inputs, pick the KV split, launch ``compiled(in_dtype, out_dtype)``, merge splits.

    ``fused_merge``: the compiled entry takes the output pointer and merges the splits itself.
    ``merge_in_kernel``: it also takes arrival counters (the last split CTA of a row block
    merges; implies ``fused_merge``).
    ``packed``: launch through :class:`PackedLaunch` (no per-call CuTe DSL argument conversion).
    """
    import cuda.bindings.driver as cuda
    import cutlass

    from kernels.mla_decode import reference as ref

    ref.check_inputs(q, kv_cache, cache_seqlens)
    rows = check_query(version, q, m_blk)
    b, s, h, _ = q.shape
    t_max = kv_cache.shape[1]
    q = q.contiguous()
    kv_cache = kv_cache.contiguous()
    lens = cache_seqlens.to(device=q.device, dtype=torch.int32).contiguous()

    n_tiles = math.ceil(t_max / n_blk)
    splits, per_split = pick_splits(b * rows // m_blk, n_tiles, num_sms(q.device))
    LAST_INFO.clear()
    # kernels per call: the attention kernel, plus a merge kernel when partials are merged
    # outside it (the Triton combine, or the second kernel of a fused-merge entry)
    LAST_INFO.update(
        splits=splits,
        tiles_per_split=per_split,
        kernels=1 if splits == 1 or merge_in_kernel else 2,
    )
    in_dt = getattr(cutlass, _TORCH_TO_CUTE[q.dtype])
    if splits == 1:  # the kernel writes the final output directly
        o = torch.empty(b, rows, 1, ref.D_V, dtype=q.dtype, device=q.device)
        out_dt = in_dt
    else:  # fp32 partials, [b, rows, splits, 512]: one row's splits side by side
        o = torch.empty(b, rows, splits, ref.D_V, dtype=torch.float32, device=q.device)
        out_dt = cutlass.Float32
    lse = torch.empty(b, rows, splits, dtype=torch.float32, device=q.device)
    out_args: tuple[Any, ...] = ()
    fused_merge = fused_merge or merge_in_kernel
    if fused_merge:
        out = o if splits == 1 else torch.empty(b, rows, ref.D_V, dtype=q.dtype, device=q.device)
        out_args = (_gmem_ptr(in_dt, out.data_ptr(), 16),)
    if merge_in_kernel:
        sem = merge_counters(q.device, b * rows // m_blk)
        out_args += (_gmem_ptr(cutlass.Int32, sem.data_ptr(), 4),)

    fn = compiled(in_dt, out_dt)
    sha = launched_ptx_sha256(fn)
    if sha is not None:
        LAST_INFO["ptx_sha256"] = sha
    stream = cuda.CUstream(torch.cuda.current_stream(q.device).cuda_stream)
    ints = [b, rows, t_max, splits, per_split]
    scale_log2 = float(sm_scale) * LOG2_E

    def cute_args() -> tuple[Any, ...]:
        return (
            _gmem_ptr(in_dt, q.data_ptr(), 16),
            _gmem_ptr(in_dt, kv_cache.data_ptr(), 16),
            _gmem_ptr(cutlass.Int32, lens.data_ptr(), 4),
            _gmem_ptr(out_dt, o.data_ptr(), 16),
            _gmem_ptr(cutlass.Float32, lse.data_ptr(), 4),
            *out_args,
            *ints,
            scale_log2,
            stream,
        )

    if packed:
        addrs = [q.data_ptr(), kv_cache.data_ptr(), lens.data_ptr(), o.data_ptr(), lse.data_ptr()]
        if fused_merge:
            addrs.append(out.data_ptr())
        if merge_in_kernel:
            addrs.append(sem.data_ptr())
        _packed_launch(fn)(addrs, ints, scale_log2, stream, cute_args)
    else:
        fn(*cute_args())
    if splits == 1:
        return o.view(b, s, h, ref.D_V)
    if fused_merge:
        return out.view(b, s, h, ref.D_V)
    # one Triton program per query row merges its splits (the Triton ladder's combine kernel)
    from kernels.mla_decode import triton_common

    out = torch.empty(b, s, h, ref.D_V, dtype=q.dtype, device=q.device)
    triton_common.combine(
        o.view(b * rows, splits, ref.D_V), lse.view(b * rows, splits), out.view(b * rows, ref.D_V)
    )
    return out


class VersionHost:
    """The host side of one CuTe DSL version: its kernel object, the signature it is compiled
    for, one compile per (input, output) dtype, and the contract call.

    A version module builds one and exports its methods under the names the registry, the
    benchmark and the PTX fingerprints read::

        _HOST = VersionHost(VERSION, _MlaDecodeV7(), M_BLK, N_BLK, merge_in_kernel=True, packed=True)
        entry, example_args, mla_decode = _HOST.entry, _HOST.example_args, _HOST.mla_decode

    ``fused_merge`` / ``merge_in_kernel`` fix which pointers the compiled entry takes (see
    :func:`launch_args_template`) and how :func:`run_split_kv` launches it; ``packed`` and
    ``planned`` only change the launch (:class:`PackedLaunch`, or the per-shape plans of
    :func:`kernels.mla_decode.cute_plan.run_planned`). A version that changes only the launch
    of an earlier version's kernel takes :meth:`with_launch` of that version's host, which shares
    its compiles.
    """

    def __init__(
        self,
        version: str,
        kernel: Any,
        m_blk: int,
        n_blk: int,
        *,
        fused_merge: bool = False,
        merge_in_kernel: bool = False,
        packed: bool = False,
        planned: bool = False,
    ) -> None:
        if planned and not merge_in_kernel:
            raise ValueError(f"{version}: planned launches need a kernel that merges in place")
        self.version = version
        self.kernel = kernel
        self.m_blk = m_blk
        self.n_blk = n_blk
        self.fused_merge = fused_merge or merge_in_kernel
        self.merge_in_kernel = merge_in_kernel
        self.packed = packed
        self.planned = planned
        self._compiles: dict[tuple[Any, Any], Any] = {}

    def with_launch(
        self, version: str, *, packed: bool | None = None, planned: bool | None = None
    ) -> VersionHost:
        """Another version with this kernel and these compiles, launched differently."""
        other = VersionHost(
            version,
            self.kernel,
            self.m_blk,
            self.n_blk,
            fused_merge=self.fused_merge,
            merge_in_kernel=self.merge_in_kernel,
            packed=self.packed if packed is None else packed,
            planned=self.planned if planned is None else planned,
        )
        other._compiles = self._compiles  # one compile per dtype pair for both versions
        return other

    def entry(self) -> Any:
        """The ``@cute.jit`` entry point (for compile-only checks)."""
        return self.kernel

    def example_args(self, in_dtype: Any = None, out_dtype: Any = None) -> tuple[Any, ...]:
        """Arguments that fix the compiled signature (addresses are placeholders); default
        dtypes: bf16 inputs, fp32 split-KV partials."""
        import cutlass

        return launch_args_template(
            in_dtype or cutlass.BFloat16,
            out_dtype or cutlass.Float32,
            self.m_blk,
            self.n_blk,
            with_out=self.fused_merge,
            with_sem=self.merge_in_kernel,
        )

    def compiled(self, in_dtype: Any, out_dtype: Any) -> Any:
        """One compile per (input, output) dtype, kept for the process; every shape is a
        runtime argument."""
        key = (in_dtype, out_dtype)
        if key not in self._compiles:
            self._compiles[key] = compile_kernel(
                self.kernel, *self.example_args(in_dtype, out_dtype)
            )
        return self._compiles[key]

    def mla_decode(
        self, q: torch.Tensor, kv_cache: torch.Tensor, cache_seqlens: torch.Tensor, sm_scale: float
    ) -> torch.Tensor:
        """The contract call of :mod:`kernels.mla_decode.reference`: ``q [b, s, h, 576]``,
        ``kv_cache [b, t, 576]``, ``cache_seqlens [b]`` -> ``out [b, s, h, 512]``."""
        args = (self.version, self.compiled, self.m_blk, self.n_blk)
        if self.planned:
            from kernels.mla_decode.cute_plan import run_planned

            return run_planned(*args, q, kv_cache, cache_seqlens, sm_scale)
        return run_split_kv(
            *args,
            q,
            kv_cache,
            cache_seqlens,
            sm_scale,
            fused_merge=self.fused_merge,
            merge_in_kernel=self.merge_in_kernel,
            packed=self.packed,
        )


_COUNTERS: dict[tuple[str, int | None], torch.Tensor] = {}


def merge_counters(device: torch.device, n: int) -> torch.Tensor:
    """``n`` zeroed int32 arrival counters on ``device``, allocated once and reused.

    The kernel that uses them resets each counter to 0 when its row block is merged, so the
    buffer is all zeros again between calls (calls on one stream run one after another). One
    buffer serves every stream of the device: calls of cute_v7/v8 on different streams must not
    overlap in time (cute_v9's launch plans keep their counters per stream).
    """
    key = (device.type, device.index)
    buf = _COUNTERS.get(key)
    if buf is None or buf.numel() < n:
        buf = torch.zeros(max(n, 1024), dtype=torch.int32, device=device)
        _COUNTERS[key] = buf
    return buf


class PackedLaunch:
    """Call a compiled CuTe DSL entry with argument storage built once, not per call.

    Per call, CuTe DSL 4.3 converts every argument in Python (Int32/Float32 objects, ctypes
    pointers, pointer objects): tens of microseconds, as much as a whole decode kernel. Its
    calling convention (``JitCompiledFunction.run_compiled_program``) takes a list with one
    address per runtime argument, pointing at that argument's value. This class keeps ctypes
    slots for the values (pointers, then int32s, then the fp32 scale, then the stream) and
    passes their addresses. The first call checks the packed bytes against CuTe DSL's own
    conversion (:func:`check_packing`) and raises if they differ (e.g. another cutlass-dsl
    version with another convention).
    """

    def __init__(self, fn: Any) -> None:
        self.fn = fn
        self.ptrs: list[ctypes.c_void_p] = []
        self.i32: list[ctypes.c_int32] = []
        self.f32 = ctypes.c_float()
        self.checked = False

    def pack(self, addrs: list[int], ints: list[int], scale: float, stream: Any) -> list[int]:
        while len(self.ptrs) < len(addrs):
            self.ptrs.append(ctypes.c_void_p())
        while len(self.i32) < len(ints):
            self.i32.append(ctypes.c_int32())
        out: list[int] = []
        for slot, a in zip(self.ptrs, addrs, strict=False):
            slot.value = a
            out.append(ctypes.addressof(slot))
        for islot, v in zip(self.i32, ints, strict=False):
            islot.value = v
            out.append(ctypes.addressof(islot))
        self.f32.value = scale
        out.append(ctypes.addressof(self.f32))
        out.append(int(stream.getPtr()))  # the CUstream object owns this storage
        return out

    def __call__(
        self,
        addrs: list[int],
        ints: list[int],
        scale: float,
        stream: Any,
        cute_args: Callable[[], tuple[Any, ...]],
    ) -> None:
        exe = self.pack(addrs, ints, scale, stream)
        if not self.checked:
            ref_args = cute_args()
            check_packing(self.fn, exe, ref_args, [8] * len(addrs) + [4] * len(ints) + [4, 8])
            self.checked = True
        self.fn.run_compiled_program(exe)  # takes (and extends) a fresh list each call


def check_packing(fn: Any, packed: list[int], cute_args: tuple[Any, ...], sizes: list[int]) -> None:
    """Raise unless ``packed`` points at the same argument bytes as CuTe DSL's own conversion."""
    ref_exe, _adapted = fn.generate_execution_args(*cute_args)
    if len(ref_exe) != len(packed):
        raise RuntimeError(f"packed {len(packed)} arguments, CuTe DSL makes {len(ref_exe)}")
    for i, (mine, theirs, size) in enumerate(zip(packed, ref_exe, sizes, strict=True)):
        addr = theirs.value if isinstance(theirs, ctypes.c_void_p) else int(theirs)
        if ctypes.string_at(mine, size) != ctypes.string_at(addr, size):
            raise RuntimeError(f"packed argument {i} differs from CuTe DSL's conversion")


_PACKED: dict[int, PackedLaunch] = {}


def _packed_launch(fn: Any) -> PackedLaunch:
    key = id(fn)  # compiled functions live for the process (functools.cache)
    if key not in _PACKED:
        _PACKED[key] = PackedLaunch(fn)
    return _PACKED[key]


# ---------------------------------------------------------------------------------------------
# Trace-time helpers for the @cute.jit entries: the global views of the arguments, the
# shared-memory layouts, the copy and MMA objects the kernels receive.
# ---------------------------------------------------------------------------------------------


def mla_global_tensors(
    p_q: Any,
    p_kv: Any,
    p_lens: Any,
    p_o: Any,
    p_lse: Any,
    batch: Any,
    rows: Any,
    t_max: Any,
    splits: Any,
) -> tuple[Any, Any, Any, Any, Any]:
    """``(m_q, m_kv, m_lens, m_o, m_lse)``: q [b, rows, 576], kv [b, t, 576], lens [b], the
    partial O as [b, splits, rows, 512] over memory laid out [b, rows, splits, 512] (a row's
    splits side by side for the merge), and the base-2 LSE [b, splits, rows].

    The innermost extents are static, so 16-byte vector copies are legal; the dynamic strides
    are multiples of 64 elements, and ``cute.assume`` says so, so that the per-sequence base
    addresses keep their 16-byte alignment."""
    import cutlass.cute as cute

    from kernels.mla_decode import reference as ref

    q_bstride = cute.assume(rows * ref.D_QK, divby=64)
    kv_bstride = cute.assume(t_max * ref.D_QK, divby=64)
    o_rstride = cute.assume(splits * ref.D_V, divby=64)
    o_bstride = cute.assume(rows * splits * ref.D_V, divby=64)
    m_q = cute.make_tensor(
        p_q, cute.make_layout((batch, rows, ref.D_QK), stride=(q_bstride, ref.D_QK, 1))
    )
    m_kv = cute.make_tensor(
        p_kv, cute.make_layout((batch, t_max, ref.D_QK), stride=(kv_bstride, ref.D_QK, 1))
    )
    m_lens = cute.make_tensor(p_lens, cute.make_layout((batch,)))
    m_o = cute.make_tensor(
        p_o,
        cute.make_layout((batch, splits, rows, ref.D_V), stride=(o_bstride, ref.D_V, o_rstride, 1)),
    )
    m_lse = cute.make_tensor(
        p_lse, cute.make_layout((batch, splits, rows), stride=(rows * splits, 1, splits))
    )
    return m_q, m_kv, m_lens, m_o, m_lse


def mla_smem_layouts(dtype: Any, m_blk: int, n_blk: int, stages: int) -> tuple[Any, ...]:
    """``(s_ql, s_qr, s_kl, s_kr, s_vt, s_p)`` wgmma layouts (128B swizzle): K-major atoms for
    Q (latent, rope), the KV stages and P; the MN-major V^T view of the KV stages addresses the
    same bytes as the K-major K view, so V costs no copy."""
    import cutlass.cute as cute
    from cutlass.cute.nvgpu import warpgroup

    from kernels.mla_decode import reference as ref

    k_atom = warpgroup.make_smem_layout_atom(warpgroup.SmemLayoutAtomKind.K_SW128, dtype)
    mn_atom = warpgroup.make_smem_layout_atom(warpgroup.SmemLayoutAtomKind.MN_SW128, dtype)
    lat, rope = ref.D_LATENT, ref.D_ROPE
    return (
        cute.tile_to_shape(k_atom, (m_blk, lat), (0, 1)),
        cute.tile_to_shape(k_atom, (m_blk, rope), (0, 1)),
        cute.tile_to_shape(k_atom, (n_blk, lat, stages), (0, 1, 2)),
        cute.tile_to_shape(k_atom, (n_blk, rope, stages), (0, 1, 2)),
        cute.tile_to_shape(mn_atom, (lat, n_blk, stages), (1, 0, 2)),
        cute.tile_to_shape(k_atom, (m_blk, n_blk), (0, 1)),
    )


def g2s_tiled_copy(dtype: Any, threads: int) -> Any:
    """Global -> shared copies by ``threads`` threads with 16-byte ``cp.async``: 8 threads per
    64-element row segment, ``threads // 8`` rows per copy step."""
    import cutlass.cute as cute
    from cutlass.cute.nvgpu import cpasync

    return cute.make_tiled_copy_tv(
        cute.make_copy_atom(
            cpasync.CopyG2SOp(cache_mode=cpasync.LoadCacheMode.GLOBAL),
            dtype,
            num_bits_per_copy=128,
        ),
        cute.make_layout((threads // 8, 8), stride=(8, 1)),
        cute.make_layout((1, 8)),
    )


def wgmma_tiled(dtype: Any, m: int, n: int, a_source: Any, b_major: Any, atoms_n: int = 1) -> Any:
    """A tiled warpgroup MMA with fp32 accumulators and a K-major A operand: ``atoms_n``
    warpgroups side by side along N, each computing ``m x n`` per k16 step. ``a_source``:
    ``warpgroup.OperandSource.SMEM`` (descriptor) or ``RMEM`` (registers); ``b_major``: K for
    the keys of ``Q K^T``, MN for the V^T view of ``P V``."""
    import cutlass
    import cutlass.cute as cute
    from cutlass.cute.nvgpu import warpgroup

    op = warpgroup.MmaF16BF16Op(
        dtype, cutlass.Float32, (m, n, 16), a_source, warpgroup.OperandMajorMode.K, b_major
    )
    return cute.make_tiled_mma(cute.make_mma_atom(op), (1, atoms_n, 1))


def mla_out_tensor(p_out: Any, batch: Any, rows: Any) -> Any:
    """The final output [b, rows, 512] in q's dtype, for entries that merge the split partials."""
    import cutlass.cute as cute

    from kernels.mla_decode import reference as ref

    return cute.make_tensor(
        p_out,
        cute.make_layout(
            (batch, rows, ref.D_V), stride=(cute.assume(rows * ref.D_V, divby=64), ref.D_V, 1)
        ),
    )


def mla_counters_tensor(p_sem: Any, batch: Any, rows: Any, m_blk: int) -> Any:
    """The split-merge arrival counters [b, rows / m_blk] (see :func:`merge_counters`)."""
    import cutlass.cute as cute

    return cute.make_tensor(
        p_sem, cute.make_layout((batch, rows // m_blk), stride=(rows // m_blk, 1))
    )


# ---------------------------------------------------------------------------------------------
# Device-side helpers (traced by CuTe DSL; plain Python at import time).
# ---------------------------------------------------------------------------------------------


def kv_tile_range(
    m_lens: Any, bi: Any, split: Any, tiles_per_split: Any, n_blk: int
) -> tuple[Any, Any, Any, Any]:
    """``(seqlen, tile_begin, tile_end, n_steps)``: sequence ``bi``'s length and the KV tiles
    ``[tile_begin, tile_end)`` of split ``split`` (``n_steps = tile_end - tile_begin`` may be 0
    or less when the sequence ends before the split starts)."""
    import cutlass

    seqlen = m_lens[bi]
    n_tiles = (seqlen + (n_blk - 1)) // n_blk
    tile_begin = split * tiles_per_split
    tile_end = cutlass.min(tile_begin + tiles_per_split, n_tiles)
    return seqlen, tile_begin, tile_end, tile_end - tile_begin


def cta_gmem_tiles(
    m_q: Any, m_kv: Any, bi: Any, m_block: Any, m_blk: int, n_blk: int
) -> tuple[Any, Any, Any, Any]:
    """``(g_ql, g_qr, g_kl, g_kr)``: the CTA's Q rows (latent [m_blk, 512], rope [m_blk, 64])
    and sequence ``bi``'s KV as tiles (latent [n_blk, 512, tiles], rope [n_blk, 64, tiles])."""
    import cutlass.cute as cute

    from kernels.mla_decode import reference as ref

    lat, rope = ref.D_LATENT, ref.D_ROPE
    q_b = m_q[bi, None, None]
    kv_b = m_kv[bi, None, None]
    return (
        cute.local_tile(q_b, (m_blk, lat), (m_block, 0)),
        cute.local_tile(q_b, (m_blk, rope), (m_block, lat // rope)),
        cute.local_tile(kv_b, (n_blk, lat), (None, 0)),
        cute.local_tile(kv_b, (n_blk, rope), (None, lat // rope)),
    )


def mla_smem_tensors(storage: Any, *layouts: Any) -> tuple[Any, Any, Any, Any, Any]:
    """``(s_ql, s_qr, s_kl, s_kr, s_vt)`` in ``storage`` (fields ``s_ql``, ``s_qr``, ``s_kl``,
    ``s_kr``) for the first five layouts of :func:`mla_smem_layouts`; the V^T view shares the
    bytes of ``s_kl``."""
    s_ql_layout, s_qr_layout, s_kl_layout, s_kr_layout, s_vt_layout = layouts
    return (
        storage.s_ql.get_tensor(s_ql_layout.outer, swizzle=s_ql_layout.inner),
        storage.s_qr.get_tensor(s_qr_layout.outer, swizzle=s_qr_layout.inner),
        storage.s_kl.get_tensor(s_kl_layout.outer, swizzle=s_kl_layout.inner),
        storage.s_kr.get_tensor(s_kr_layout.outer, swizzle=s_kr_layout.inner),
        storage.s_kl.get_tensor(s_vt_layout.outer, swizzle=s_vt_layout.inner),
    )


def g2s_partitions(thr_g2s: Any, n_blk: int, *tiles: Any) -> tuple[Any, ...]:
    """One thread's slices of the cp.async copies ``(t_gql, t_sql, t_gqr, t_sqr, t_gkl,
    t_skl, t_gkr, t_skr, t_ckv)`` for ``tiles = (g_ql, s_ql, g_qr, s_qr, g_kl, s_kl, g_kr,
    s_kr)``; ``t_ckv`` holds the (row, column) within a KV tile of each copy it issues, for
    the row predicate at the end of a sequence."""
    import cutlass.cute as cute

    from kernels.mla_decode import reference as ref

    out = []
    for i, tile in enumerate(tiles):  # global sources, shared destinations, alternately
        out.append(thr_g2s.partition_D(tile) if i % 2 else thr_g2s.partition_S(tile))
    out.append(thr_g2s.partition_S(cute.make_identity_tensor((n_blk, ref.D_LATENT))))
    return tuple(out)


def wgmma_smem_operands(
    mma_qk: Any, thr_qk: Any, mma_pv: Any, thr_pv: Any, *smem: Any
) -> tuple[Any, Any, Any, Any, Any]:
    """``(t_aql, t_aqr, t_bkl, t_bkr, t_bv)``: the shared-memory descriptors of the wgmma
    operands for ``smem = (s_ql, s_qr, s_kl, s_kr, s_vt)``: Q latent and rope as A of the
    score product (MMA, M, K), the KV stages as its B (MMA, N, K, STAGES), and the V^T view
    of the stages as B of P@V (MMA, N, K, STAGES)."""
    s_ql, s_qr, s_kl, s_kr, s_vt = smem
    return (
        mma_qk.make_fragment_A(thr_qk.partition_A(s_ql)),
        mma_qk.make_fragment_A(thr_qk.partition_A(s_qr)),
        mma_qk.make_fragment_B(thr_qk.partition_B(s_kl)),
        mma_qk.make_fragment_B(thr_qk.partition_B(s_kr)),
        mma_pv.make_fragment_B(thr_pv.partition_B(s_vt)),
    )


def softmax_state(acc_o_mn: Any) -> tuple[int, Any, Any]:
    """``(n_rows, row_max, row_sum)``: this thread's rows of the O accumulator and its online
    softmax state for them, the running maximum (-inf) and the running sum (0)."""
    import cutlass
    import cutlass.cute as cute

    n_rows = cute.size(acc_o_mn, mode=[0])
    row_max = cute.make_rmem_tensor((n_rows,), cutlass.Float32)
    row_sum = cute.make_rmem_tensor((n_rows,), cutlass.Float32)
    row_max.fill(-cutlass.Float32.inf)
    row_sum.fill(0.0)
    return n_rows, row_max, row_sum


def pinned_index(k: int) -> Any:
    """``k`` as an Int32 the compiler cannot compute ahead of the instructions before it: it
    comes out of an inline ``mov`` marked as having side effects, which keeps its place among
    the wgmma instructions (also inline assembly with side effects).

    Why: when a k loop of wgmmas is unrolled with constant indices, every step's shared-memory
    descriptors are constants plus the tile's base, and the compiler computes all of them
    before the first wgmma. For the 36 k16 steps of the score product that is 72 64-bit
    descriptors live at once, more than the 63 uniform registers a warp has, so ptxas keeps
    them in ordinary registers and copies each one into uniform registers (``R2UR``) just
    before its wgmma, four copies per step (read from the SASS, scripts/mla_sass_structure.py).
    Indexing each step with ``pinned_index(k)`` makes its descriptors depend on a value that
    exists only after the previous wgmma was issued, so they are formed one step at a time,
    in uniform registers, as in FlashMLA's kernel."""
    import cutlass
    from cutlass._mlir.dialects import llvm

    return cutlass.Int32(
        llvm.inline_asm(
            cutlass.Int32.mlir_type,
            [cutlass.Int32(k).ir_value()],
            "mov.b32 $0, $1;",
            "=r,r",
            has_side_effects=True,
            is_align_stack=False,
            asm_dialect=llvm.AsmDialect.AD_ATT,
        )
    )


def qk_scores(
    mma_qk: Any,
    thr_qk: Any,
    t_aql: Any,
    t_aqr: Any,
    t_bkl: Any,
    t_bkr: Any,
    stage: Any,
    m_blk: int,
    n_blk: int,
    slice_ready: Callable[[int], None] | None = None,
    pin_descriptors: bool = False,
) -> Any:
    """``S = Q K^T`` for the KV tile in ``stage`` with wgmma from shared memory: the 512
    latent then the 64 rope columns, k16 steps, fp32 accumulator (returned, this thread's
    fragment of the ``m_blk x n_blk`` tile), issued, committed and waited for.

    ``slice_ready`` (cute_v12): ``slice_ready(j)`` is traced just before the first wgmma that
    reads the stage's 64-column slice ``j`` (0-7: latent, 8: rope), so that it can wait for
    that slice alone; None: nothing is traced in between.

    ``pin_descriptors`` (cute_v16): each k step indexes the operands with
    :func:`pinned_index`, so that its descriptors are formed in uniform registers just before
    its wgmma; False keeps constant indices (the PTX of cute_v2-v15 as measured)."""
    import cutlass
    import cutlass.cute as cute
    from cutlass.cute.nvgpu import warpgroup

    from kernels.mla_decode import reference as ref

    acc_s = cute.make_rmem_tensor(thr_qk.partition_shape_C((m_blk, n_blk)), cutlass.Float32)
    warpgroup.fence()
    qk = cute.make_mma_atom(mma_qk.op)
    qk.set(warpgroup.Field.ACCUMULATE, False)
    k_per_slice = ref.D_ROPE // 16  # k16 wgmma steps per 64-column slice
    # a plain function, not traced by CuTe DSL's preprocessor: Python loops over static sizes
    # unroll here as range_constexpr loops do in a @cute.jit body
    for k in range(cute.size(t_aql, mode=[2])):
        if slice_ready is not None and k % k_per_slice == 0:
            slice_ready(k // k_per_slice)
        kk = pinned_index(k) if pin_descriptors else k
        cute.gemm(qk, acc_s, t_aql[None, None, kk], t_bkl[None, None, kk, stage], acc_s)
        qk.set(warpgroup.Field.ACCUMULATE, True)
    for k in range(cute.size(t_aqr, mode=[2])):
        if slice_ready is not None and k == 0:
            slice_ready(ref.D_LATENT // ref.D_ROPE)
        kk = pinned_index(k) if pin_descriptors else k
        cute.gemm(qk, acc_s, t_aqr[None, None, kk], t_bkr[None, None, kk, stage], acc_s)
    warpgroup.commit_group()
    warpgroup.wait_group(0)
    return acc_s


def mn_view(acc: Any) -> Any:
    """View an MMA accumulator fragment as ``(rows, cols)`` of this thread.

    mma.sync m16n8: ``((2, 2), MMA_M, MMA_N)``; wgmma m64nN: ``((2, 2, N/8), MMA_M, MMA_N)``.
    Within an 8-column group a thread holds 2 columns (mode 0) of 2 rows 8 apart (mode 1).
    """
    import cutlass.cute as cute

    lay = cute.make_layout(acc.layout.shape)
    shp, std = lay.shape, lay.stride
    mn = cute.make_layout(
        ((shp[0][1], shp[1]), (shp[0][0], *shp[0][2:], shp[2])),
        stride=((std[0][1], std[1]), (std[0][0], *std[0][2:], std[2])),
    )
    return cute.make_tensor(acc.iterator, cute.composition(acc.layout, mn))


def acc_as_wgmma_a(acc: Any) -> Any:
    """Re-read a wgmma m64nN accumulator (after conversion to 16-bit) as the A operand of a
    following wgmma with K = N: ``((2, 2, N/8), M, 1)`` -> ``((2, 2, 2), M, (N/16, 1))``.

    The k16 A fragment of a thread holds the same (row, column) pairs as two adjacent n8
    accumulator groups, so this is a pure relabelling of registers.
    """
    import cutlass.cute as cute

    lay = cute.logical_divide(acc.layout, ((None, None, 2), None, None))
    shp, std = lay.shape, lay.stride
    frg = cute.make_layout(
        ((shp[0][0], shp[0][1], shp[0][2][0]), shp[1], (shp[0][2][1], shp[2])),
        stride=((std[0][0], std[0][1], std[0][2][0]), std[1], (std[0][2][1], std[2])),
    )
    return cute.make_tensor(acc.iterator, frg)


def quad_allreduce(val: Any, op: Callable[[Any, Any], Any]) -> Any:
    """Reduce over the 4 lanes that share one accumulator row (lane bits 0 and 1)."""
    import cutlass.cute as cute

    val = op(val, cute.arch.shuffle_sync_bfly(val, offset=2, mask=-1, mask_and_clamp=31))
    return op(val, cute.arch.shuffle_sync_bfly(val, offset=1, mask=-1, mask_and_clamp=31))


if __name__ == "__main__":
    # The first results files were written by this command; it now runs kernels.mla_decode.cute_bench.
    from kernels.mla_decode.cute_bench import main

    raise SystemExit(main())
