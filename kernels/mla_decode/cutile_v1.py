"""cuTile (NVIDIA ``cuda-tile``) MLA decode, version 1: one tile program per (sequence, block of
64 query rows, half of the 512 output columns), online softmax over KV tiles of 64 rows.

**Why a prebuilt image.** The H200 machine has no cuTile compiler (``tileiras``) and cannot
install one; this CPU machine can run it but has no GPU. So the kernel is compiled ahead of time
by ``python -m kernels.mla_decode.cutile_build`` (cuda-tile's ``export_kernel`` to TileIR
bytecode, then ``tileiras --gpu-name sm_90``) into ``kernels/mla_decode/build/cutile/`` and this
module only loads the result with the CUDA driver API (``cuModuleLoadData``,
``cuLaunchKernel`` on torch's current stream). It never imports ``cuda.tile``: only
:func:`tile_kernel` and :func:`signatures` do, and only the build script calls them.

**The tile program** (:func:`tile_kernel`). ``q`` is viewed as ``[b, s*h, 576]`` (every query
row of a sequence sees the same keys), ``out`` as ``[b, s*h, 512]``. Program ``(m, i, c)``:

- loads its 64 query rows as a ``64x512`` latent tile and a ``64x64`` rope tile (tile index 8
  of the 64-wide column tiling: cuTile tile shapes are powers of two, 576 is not, so
  ``S = Q_lat K_lat^T + Q_rope K_rope^T`` is two ``ct.mma`` with fp32 accumulation);
- loops over the ``len // 64`` full KV tiles without any mask, then handles the partial last
  tile (if any) in a separate block that masks the scores to -1e30 past the length and zeroes
  the V rows past it (so NaN/inf garbage in unused cache rows cannot turn into ``0 * NaN``);
- online softmax in base 2 (``qk_scale = sm_scale * log2(e)`` is the kernel's f32 argument),
  ``P`` rounded to bf16 for ``O += P V`` (fp32 accumulator ``64x256``);
- V is the 256-column slice ``c`` of the same cache rows (``kv[..., 256c : 256c + 256]``).

Grid ``(ceil(s*h / 64), b, 2)``. The output columns are split over the third grid dimension
because a ``64x512`` fp32 accumulator does not fit: with it, tileiras falls back from wgmma
to ``mma.sync`` and spills ~6 KB per thread (ptxas frame 6136 B); with 256 columns it emits
``wgmma m64n256k16`` / ``m64n64k16`` and spills 464 B per thread (255 registers, 256 threads,
221 KB static shared memory: its own multi-stage buffers). The price is that each half
recomputes the score tile (~1.5x the MMA work of a single pass). No split-KV: decode b=32 s=1
gives 2*32*2 = 128 programs on 132 SMs; long single sequences would be under-filled.

**No TMA.** With TMA allowed (the default), tileiras adds six hidden 128-byte ``CUtensorMap``
kernel parameters that cuTile's own runtime encodes on the host (``cuTensorMapEncodeTiled``);
a plain driver launch cannot fill them, so every load and store passes ``allow_tma=False``
(the loads become ``ld.global`` into shared memory). See ``cutile_build`` for the checks.

**Parameter ABI** (``cutile_python_v1`` calling convention, checked by the build against the
PTX ``.param`` list): for each array, in order ``q, kv, lens, out``: ``u64`` base pointer, one
``i32`` per dimension for the shape, one ``i32`` per dimension for the stride in elements (the
last stride is compiled as the constant 1 but still passed), each array's pointer 8-byte
aligned; then ``f32 qk_scale``. 25 parameters, 116 bytes. ``BLOCK_M``, ``BLOCK_N`` and
``D_OUT`` are ``ct.Constant`` and baked in. Block size: the PTX ``.reqntid`` (256), recorded in
the manifest; no dynamic shared memory.

**Images, in the order tried** (all built from the same PTX): ``*.tileiras.cubin`` (tileiras's
own, with its TileIR host section), ``*.sm_90a.cubin`` (the same PTX re-assembled by ptxas 13.4
without the host section: a plain CUDA cubin), ``*.jit.ptx`` (PTX ISA lowered from 9.4 to 9.0,
``.language``/``.loc``/``.file``/``next knob`` pragmas removed, for the 580 driver's JIT).
``KBOPT_CUTILE_IMAGE=tileiras|sm_90a|ptx`` forces one. The first launch on each device is
synchronised and checked; a load or launch error moves on to the next image.

**Measured / not measured.** Built and inspected on a CPU-only machine (cuda-tile 1.7.0,
tileiras 13.4.92, 2026-12-02): the compile, the PTX instruction mix, registers and spills
above, and the parameter layout. The tiling's arithmetic is checked in float32 torch by
``tests/kernels/test_mla_decode_cutile.py`` (an emulation, not the kernel: cuTile has no CPU
interpreter). Whether the 580 driver loads any of the images, accepts 221 KB of *static*
shared memory, and the kernel's correctness and speed on the H200 are NOT measured here: run
``kernels/mla_decode/cutile_gpu_check.sh``.
"""

# No ``from __future__ import annotations``: cuTile reads the kernel's annotations
# (``ct.Constant[int]``) with typing.get_type_hints, which cannot resolve the local ``ct``.
import ctypes
import json
import math
import os
import threading
from pathlib import Path
from typing import Any

import torch

from kernels.mla_decode import reference as ref

VERSION = "cutile_v1"
DESCRIPTION = (
    "cuTile (cuda-tile 1.7, built ahead of time): one program per 64 query rows and 256 output "
    "columns, online softmax over 64-row KV tiles with ct.mma, masked tail tile, no split-KV"
)

BLOCK_M = 64  # query rows ((position, head) pairs) per program
BLOCK_N = 64  # KV rows per loop step
D_OUT = 256  # output columns per program (grid dimension 2 covers D_V = 512)
KERNEL_NAME = "mla_decode_cutile_v1"
LOG2_E = 1.4426950408889634

BUILD_DIR = Path(__file__).resolve().parent / "build" / "cutile"
MANIFEST_NAME = f"{KERNEL_NAME}.json"
BUILD_COMMAND = "python -m kernels.mla_decode.cutile_build"
IMAGE_KINDS = ("tileiras", "sm_90a", "ptx")  # the order the loader tries them in

# (array name, ndim) in kernel-argument order, then the f32 scalar: the cutile_python_v1 ABI.
ARRAYS = (("q", 3), ("kv", 3), ("lens", 1), ("out", 3))


def param_layout() -> list[dict[str, Any]]:
    """The kernel's parameters as ``{name, type, offset, size}`` in launch order."""
    out: list[dict[str, Any]] = []
    off = 0
    for name, nd in ARRAYS:
        off = (off + 7) // 8 * 8
        out.append({"name": f"{name}.ptr", "type": "u64", "offset": off, "size": 8})
        off += 8
        for kind in ("shape", "stride"):
            for d in range(nd):
                out.append({"name": f"{name}.{kind}{d}", "type": "u32", "offset": off, "size": 4})
                off += 4
    out.append({"name": "qk_scale", "type": "f32", "offset": off, "size": 4})
    return out


# --------------------------------------------------------------------------- the tile program
def tile_kernel() -> Any:
    """The ``@ct.kernel`` (needs ``cuda.tile``; called by the build script only)."""
    import cuda.tile as ct

    @ct.kernel
    def mla_decode_cutile_v1(
        q,
        kv,
        lens,
        out,
        qk_scale: float,
        BLOCK_M: ct.Constant[int],
        BLOCK_N: ct.Constant[int],
        D_OUT: ct.Constant[int],
    ):
        m_blk = ct.bid(0)
        seq = ct.bid(1)
        col = ct.bid(2)
        n = ct.load(lens, (seq,), shape=())
        # 576 = 512 + 64 columns: the latent tile (index 0 of a 512-wide tiling) and the rope
        # tile (index 8 of a 64-wide tiling)
        q_lat = ct.load(q, (seq, m_blk, 0), shape=(1, BLOCK_M, 512), allow_tma=False)
        q_lat = ct.reshape(q_lat, (BLOCK_M, 512))
        q_rope = ct.load(q, (seq, m_blk, 8), shape=(1, BLOCK_M, 64), allow_tma=False)
        q_rope = ct.reshape(q_rope, (BLOCK_M, 64))
        m_i = ct.full((BLOCK_M, 1), -1e30, dtype=ct.float32)
        l_i = ct.zeros((BLOCK_M, 1), dtype=ct.float32)
        acc = ct.zeros((BLOCK_M, D_OUT), dtype=ct.float32)
        n_full = n // BLOCK_N
        for j in range(n_full):  # full tiles: no mask
            k_lat = ct.load(kv, (seq, j, 0), shape=(1, BLOCK_N, 512), allow_tma=False)
            k_rope = ct.load(kv, (seq, j, 8), shape=(1, BLOCK_N, 64), allow_tma=False)
            s = ct.zeros((BLOCK_M, BLOCK_N), dtype=ct.float32)
            s = ct.mma(q_lat, ct.transpose(ct.reshape(k_lat, (BLOCK_N, 512))), s)
            s = ct.mma(q_rope, ct.transpose(ct.reshape(k_rope, (BLOCK_N, 64))), s)
            s = s * qk_scale
            m_new = ct.maximum(m_i, ct.max(s, axis=1, keepdims=True))
            p = ct.exp2(s - m_new)
            alpha = ct.exp2(m_i - m_new)
            l_i = l_i * alpha + ct.sum(p, axis=1, keepdims=True)
            v = ct.load(kv, (seq, j, col), shape=(1, BLOCK_N, D_OUT), allow_tma=False)
            v = ct.reshape(v, (BLOCK_N, D_OUT))
            acc = ct.mma(ct.astype(p, ct.bfloat16), v, acc * alpha)
            m_i = m_new
        if n_full * BLOCK_N < n:  # the partial last tile: mask scores and V rows past n
            k_lat = ct.load(kv, (seq, n_full, 0), shape=(1, BLOCK_N, 512), allow_tma=False)
            k_rope = ct.load(kv, (seq, n_full, 8), shape=(1, BLOCK_N, 64), allow_tma=False)
            s = ct.zeros((BLOCK_M, BLOCK_N), dtype=ct.float32)
            s = ct.mma(q_lat, ct.transpose(ct.reshape(k_lat, (BLOCK_N, 512))), s)
            s = ct.mma(q_rope, ct.transpose(ct.reshape(k_rope, (BLOCK_N, 64))), s)
            s = s * qk_scale
            rows = n_full * BLOCK_N + ct.arange(BLOCK_N, dtype=ct.int32)
            s = ct.where(ct.reshape(rows < n, (1, BLOCK_N)), s, -1e30)
            m_new = ct.maximum(m_i, ct.max(s, axis=1, keepdims=True))
            p = ct.exp2(s - m_new)
            alpha = ct.exp2(m_i - m_new)
            l_i = l_i * alpha + ct.sum(p, axis=1, keepdims=True)
            v = ct.load(kv, (seq, n_full, col), shape=(1, BLOCK_N, D_OUT), allow_tma=False)
            v = ct.where(ct.reshape(rows < n, (BLOCK_N, 1)), ct.reshape(v, (BLOCK_N, D_OUT)), 0.0)
            acc = ct.mma(ct.astype(p, ct.bfloat16), v, acc * alpha)
            m_i = m_new
        o = ct.astype(acc / l_i, ct.bfloat16)
        ct.store(out, (seq, m_blk, col), tile=ct.reshape(o, (1, BLOCK_M, D_OUT)), allow_tma=False)

    return mla_decode_cutile_v1


def signatures() -> list[Any]:
    """The one compiled signature: bf16 q/kv/out, int32 lens, f32 scale (needs ``cuda.tile``)."""
    import cuda.tile as ct
    from cuda.tile.compilation import (
        ArrayConstraint,
        CallingConvention,
        KernelSignature,
        ScalarConstraint,
    )

    def arr(dtype: Any, nd: int, align: int) -> Any:
        return ArrayConstraint(
            dtype,
            nd,
            index_dtype=ct.int32,
            stride_lower_bound_incl=0,
            alias_groups=(),
            may_alias_internally=False,
            stride_constant=(None,) * (nd - 1) + (1,),
            stride_divisible_by=(8,) * (nd - 1) + (1,) if nd > 1 else 1,
            base_addr_divisible_by=align,
        )

    bf16 = ct.bfloat16
    params = [arr(bf16, 3, 16), arr(bf16, 3, 16), arr(ct.int32, 1, 4), arr(bf16, 3, 16)]
    params += [ScalarConstraint(ct.float32), BLOCK_M, BLOCK_N, D_OUT]
    return [KernelSignature(params, CallingConvention.cutile_python_v1())]


# --------------------------------------------------------------------------- the launcher
def _cu() -> Any:
    try:
        from cuda.bindings import driver
    except ImportError:  # cuda-python < 12.6
        from cuda import cuda as driver  # type: ignore[no-redef]
    return driver


def _check(res: Any, what: str) -> Any:
    cu = _cu()
    err = res[0] if isinstance(res, tuple) else res
    if err != cu.CUresult.CUDA_SUCCESS:
        try:
            msg = cu.cuGetErrorString(err)[1]
            msg = msg.decode() if isinstance(msg, bytes) else str(msg)
        except Exception:
            msg = ""
        raise RuntimeError(f"cutile_v1: {what} failed: {err} {msg}".strip())
    if isinstance(res, tuple):
        return res[1] if len(res) == 2 else res[1:]
    return None


def read_manifest(build_dir: Path | None = None) -> dict[str, Any]:
    """The build's manifest; FileNotFoundError naming the file and the build command."""
    path = (build_dir or Path(os.environ.get("KBOPT_CUTILE_BUILD", BUILD_DIR))) / MANIFEST_NAME
    if not path.is_file():
        raise FileNotFoundError(
            f"cutile_v1: no prebuilt image: {path} is missing. Build it on any machine with "
            f"cuda-tile installed (pip install -e '.[cutile]'): `{BUILD_COMMAND}`, then carry "
            f"{BUILD_DIR.relative_to(BUILD_DIR.parents[2])}/ to the GPU machine."
        )
    man = json.loads(path.read_text())
    if man.get("params") != param_layout():
        raise RuntimeError(
            f"cutile_v1: {path} was built for another parameter layout; rebuild: `{BUILD_COMMAND}`"
        )
    man["_dir"] = str(path.parent)
    return man


def image_paths(man: dict[str, Any]) -> list[tuple[str, Path]]:
    """``(kind, path)`` of the images to try, in order; FileNotFoundError if none exists."""
    forced = os.environ.get("KBOPT_CUTILE_IMAGE", "")
    kinds = [forced] if forced else list(IMAGE_KINDS)
    out = []
    for kind in kinds:
        name = man.get("images", {}).get(kind)
        if name and (Path(man["_dir"]) / name).is_file():
            out.append((kind, Path(man["_dir"]) / name))
    if not out:
        raise FileNotFoundError(
            f"cutile_v1: none of the images {kinds} listed in {man['_dir']}/{MANIFEST_NAME} "
            f"exists; rebuild: `{BUILD_COMMAND}`"
        )
    return out


class _Loaded:
    def __init__(self, index: int, kind: str, module: Any, func: Any, block: int) -> None:
        self.index = index  # position in image_paths(): the next image to try is index + 1
        self.kind = kind
        self.module = module
        self.func = func
        self.block = block
        self.checked = False


_LOCK = threading.Lock()
_LOADED: dict[int, _Loaded] = {}
_FAILED: dict[int, list[str]] = {}
LAST_INFO: dict[str, Any] = {}


def _ensure_context(dev: int) -> None:
    """Make torch's (primary) context of device ``dev`` current for the driver calls."""
    cu = _cu()
    torch.cuda.init()
    ctx = _check(cu.cuCtxGetCurrent(), "cuCtxGetCurrent")
    if int(ctx) == 0:
        cudev = _check(cu.cuDeviceGet(dev), "cuDeviceGet")
        ctx = _check(cu.cuDevicePrimaryCtxRetain(cudev), "cuDevicePrimaryCtxRetain")
        _check(cu.cuCtxSetCurrent(ctx), "cuCtxSetCurrent")


def _allow_large_static_smem(func: Any, dev: int) -> None:
    """Raise the function's dynamic shared memory cap to what the device has left over the
    static part, as cuTile's own launcher does (tileiras puts ~221 KB of *static* shared memory
    in the kernel). We launch with 0 dynamic bytes; a failure here is recorded, not raised."""
    cu = _cu()
    try:
        static = _check(
            cu.cuFuncGetAttribute(
                cu.CUfunction_attribute.CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES, func
            ),
            "cuFuncGetAttribute(SHARED_SIZE_BYTES)",
        )
        optin = _check(
            cu.cuDeviceGetAttribute(
                cu.CUdevice_attribute.CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN,
                _check(cu.cuDeviceGet(dev), "cuDeviceGet"),
            ),
            "cuDeviceGetAttribute(MAX_SHARED_MEMORY_PER_BLOCK_OPTIN)",
        )
        LAST_INFO.update(static_smem=int(static), smem_optin=int(optin))
        if int(static) > 48 * 1024 and int(optin) > int(static):
            _check(
                cu.cuFuncSetAttribute(
                    func,
                    cu.CUfunction_attribute.CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
                    int(optin) - int(static),
                ),
                "cuFuncSetAttribute(MAX_DYNAMIC_SHARED_SIZE_BYTES)",
            )
    except RuntimeError as exc:
        _FAILED.setdefault(dev, []).append(str(exc))


def _load(dev: int, start: int = 0) -> _Loaded:
    """Load the first image, from position ``start`` of :func:`image_paths`, that loads."""
    cu = _cu()
    man = read_manifest()
    errors = _FAILED.setdefault(dev, [])
    for index, (kind, path) in enumerate(image_paths(man)):
        if index < start:
            continue
        data = path.read_bytes()
        if kind == "ptx":
            data += b"\0"
        try:
            mod = _check(cu.cuModuleLoadData(data), f"cuModuleLoadData({path.name})")
            func = _check(
                cu.cuModuleGetFunction(mod, man["entry"].encode()), f"cuModuleGetFunction({kind})"
            )
        except RuntimeError as exc:
            errors.append(str(exc))
            continue
        _allow_large_static_smem(func, dev)
        return _Loaded(index, kind, mod, func, int(man["block"]))
    raise RuntimeError("cutile_v1: no image could be loaded: " + " | ".join(errors))


def _args(q3: torch.Tensor, kv: torch.Tensor, lens: torch.Tensor, o3: torch.Tensor, scale: float):
    vals: list[Any] = []
    for t in (q3, kv, lens, o3):
        vals.append(ctypes.c_uint64(t.data_ptr()))
        vals += [ctypes.c_int32(int(x)) for x in t.shape]
        vals += [ctypes.c_int32(int(x)) for x in t.stride()]
    vals.append(ctypes.c_float(scale))
    argv = (ctypes.c_void_p * len(vals))(*[ctypes.addressof(v) for v in vals])
    return vals, argv


def _launch(lo: _Loaded, grid: tuple[int, int, int], argv: Any, stream: int) -> None:
    cu = _cu()
    _check(
        cu.cuLaunchKernel(
            lo.func,
            grid[0],
            grid[1],
            grid[2],
            lo.block,
            1,
            1,
            0,
            cu.CUstream(stream),
            ctypes.addressof(argv),
            0,
        ),
        f"cuLaunchKernel({lo.kind})",
    )


def mla_decode(
    q: torch.Tensor, kv_cache: torch.Tensor, cache_seqlens: torch.Tensor, sm_scale: float
) -> torch.Tensor:
    ref.check_inputs(q, kv_cache, cache_seqlens)
    if not q.is_cuda:
        raise ValueError("cutile_v1 runs on CUDA tensors only (got a CPU tensor)")
    if q.dtype != torch.bfloat16:
        raise ValueError(f"cutile_v1 is built for bf16 only, got {q.dtype}")
    b, s, h, _ = q.shape
    q3 = q.contiguous().view(b, s * h, ref.D_QK)
    kv = kv_cache.contiguous()
    lens = cache_seqlens.to(device=q.device, dtype=torch.int32).contiguous()
    if max(q3.numel(), kv.numel()) >= 2**31:
        raise ValueError("cutile_v1 uses 32-bit indexing: q or kv_cache has >= 2**31 elements")
    out = torch.empty(b, s, h, ref.D_V, dtype=q.dtype, device=q.device)
    o3 = out.view(b, s * h, ref.D_V)
    grid = (math.ceil(s * h / BLOCK_M), b, ref.D_V // D_OUT)
    keep, argv = _args(q3, kv, lens, o3, float(sm_scale) * LOG2_E)
    dev = q.device.index if q.device.index is not None else torch.cuda.current_device()
    stream = torch.cuda.current_stream(q.device).cuda_stream
    with _LOCK, torch.cuda.device(dev):  # torch's device guard makes its context current
        lo = _LOADED.get(dev)
        if lo is None:
            _ensure_context(dev)
            lo = _LOADED[dev] = _load(dev)
        if lo.checked or torch.cuda.is_current_stream_capturing():
            _launch(lo, grid, argv, stream)
        else:
            # First launch on this device: synchronise, so that an image the driver loads but
            # cannot launch (e.g. its static shared memory refused) moves on to the next one.
            while True:
                try:
                    _launch(lo, grid, argv, stream)
                    _check(_cu().cuStreamSynchronize(_cu().CUstream(stream)), "first launch")
                except RuntimeError as exc:
                    _FAILED.setdefault(dev, []).append(str(exc))
                    lo = _LOADED[dev] = _load(dev, lo.index + 1)
                    continue
                lo.checked = True
                break
    del keep
    LAST_INFO.update(image=lo.kind, grid=grid, block=lo.block, failed=list(_FAILED.get(dev, [])))
    return out
