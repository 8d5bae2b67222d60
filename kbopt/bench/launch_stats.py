"""Launch statistics without Nsight Compute: grid, warps, registers and shared memory of the
Triton kernels a call launches, and the occupancy they allow.

Nsight Compute's "Launch Statistics" and "Occupancy" sections (`launch__grid_size`,
`launch__occupancy_limit_*`...) cost a profiler pass per kernel.  For Triton kernels the
same facts are known at launch time: the compiled kernel carries its warps, registers per
thread and shared memory, and the launcher is handed the grid.  `capture()` records them
for the launches of one call (the correctness check, outside any timed region), and
`launch_metrics` turns the heaviest launch into the metrics the catalog's triggers and
moves read, so that a timing-only measurement (a tuning trial, `kbopt ablate`) still
knows whether the grid fills the GPU and what limits occupancy.

The occupancy arithmetic is the CUDA occupancy calculator's for compute capability 9.0
(CUDA C++ Programming Guide, "Compute Capabilities" table; Nsight Compute Profiling Guide,
"Occupancy"): registers are allocated per warp in units of 256, shared memory per block
in units of 128 bytes plus 1 KiB the system reserves, at most 32 blocks and 64 warps per
SM.  Device figures come from torch's device properties where it has them.  Nsight
Compute's own values, when a profile has them, replace these (`build_profile` merges
counters over timing).

Kernels launched without Triton (torch's, a CuTe DSL kernel) are not seen: the metrics
are then absent, never guessed.
"""

from __future__ import annotations

import contextlib
import dataclasses
import math
import re
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from kbopt.waves import tail_wave_pct, wave_idle_pct

# Compute capability 9.0 per-SM limits, used where torch's properties lack a figure.
SM90 = {
    "regs_per_sm": 65536,
    "max_warps_per_sm": 64,
    "max_blocks_per_sm": 32,
    "smem_per_sm": 233472,  # 228 KiB
}
REG_ALLOC_UNIT = 256  # registers, per warp
SMEM_ALLOC_UNIT = 128  # bytes
SMEM_RESERVED_PER_BLOCK = 1024  # bytes the runtime keeps per resident block
# The shared-memory carveouts an SM of compute capability 9.0 can be configured with (KiB).
SMEM_CARVEOUTS_KB = (0, 8, 16, 32, 64, 100, 132, 164, 196, 228)
# The driver's carveout choice is not documented to the byte; this rule reproduces Nsight
# Compute's `launch__occupancy_limit_shared_mem` on every kernel recorded on the H200 in
# tests/data (from 16 B to 216 KiB per block): the smallest carveout, of at least 32 KiB,
# that holds as many blocks as the warp limit allows.
SMEM_MIN_CARVEOUT_KB = 32


# What `launch_metrics` can give (kbopt.metric_sources lists them as produced by "launch").
PRODUCED = (
    "grid_size",
    "block_size",
    "registers_per_thread",
    "spill_bytes_per_thread",
    "shared_mem_per_block_kb",
    "occupancy_limit_registers",
    "occupancy_limit_shared_mem",
    "occupancy_limit_warps",
    "occupancy_limit_blocks",
    "theoretical_occupancy_pct",
    "ctas_per_sm",
    "waves_per_sm",
    "tail_wave_pct",
    "wave_idle_pct",
    "pipeline_stages",
    "libdevice_math_calls",
    "local_array_bytes_per_thread",
)

# libdevice's accurate single- and double-precision routines for transcendental functions:
# Triton inlines each one it calls into the kernel (tens to hundreds of instructions per
# element on sm_90: fp32 `tl.log` is `__nv_logf`, `libdevice.tanh` `__nv_tanhf`, `tl.sin`
# `__nv_sinf`), and LLVM leaves the routine's name in a `__nv_<name>.exit` block label.
# The cheap ones are not here: `tl.exp`, `tl.exp2` and `tl.sigmoid` lower to one
# `ex2.approx`, `tl.sqrt` to `sqrt.approx` (its `__nv_sqrtf` label included).
_SLOW_MATH_F = (
    "log", "log2", "log10", "log1p", "expm1", "tanh", "erf", "erfc", "erfinv", "erfcinv",
    "sin", "cos", "tan", "sincos", "pow", "atan", "atan2", "asin", "acos", "sinh", "cosh",
    "asinh", "acosh", "atanh", "cbrt", "lgamma", "tgamma",
)  # fmt: skip
SLOW_MATH_ROUTINES = frozenset(
    [f"{name}f" for name in _SLOW_MATH_F] + list(_SLOW_MATH_F) + ["exp", "exp2", "exp10"]
)
_NV_EXIT = re.compile(r"__nv_([A-Za-z0-9]+)\.exit")
# A local array in PTX: `.local .align 4 .b8 __local_depot0[28];` (libdevice's sin and cos
# keep the words of their Payne-Hanek argument reduction in one).  Spilled registers are
# not there: ptxas adds them to the frame after register allocation.
_LOCAL_DEPOT = re.compile(r"\.local\s+(?:\.align\s+\d+\s+)?\.b8\s+__local_depot\d+\[(\d+)\]")
LOCAL_FRAME_ALIGN = 8  # ptxas's stack frame: 28 bytes of arrays reserve 32 (sm_90, ptxas 12.x)


def local_array_bytes(ptx: str) -> int:
    """Bytes per thread of the local arrays a kernel's PTX declares."""
    return sum(int(size) for size in _LOCAL_DEPOT.findall(ptx))


def libdevice_math_calls(ptx: str) -> int:
    """How many of libdevice's slow transcendental routines a kernel's PTX inlines (each
    distinct routine once, however often it is called)."""
    return len({name for name in _NV_EXIT.findall(ptx) if name in SLOW_MATH_ROUTINES})


@dataclass(frozen=True)
class Launch:
    """One Triton kernel launch: what the compiled kernel and the grid say."""

    name: str
    grid: tuple[int, int, int]
    num_warps: int
    registers: int  # per thread
    shared_bytes: int  # static + dynamic, as the compiled kernel requests
    duration_us: float | None = None  # GPU time of this launch in the captured call
    # Local memory per thread the compiled kernel reserves (Triton's n_spills is
    # CU_FUNC_ATTRIBUTE_LOCAL_SIZE_BYTES / 4): the registers ptxas spilled, plus the local
    # arrays the PTX declares itself (`local_array_bytes`); `spilled_bytes` tells them apart.
    spill_bytes: int = 0
    # The software-pipeline depth the kernel was compiled with (Triton's num_stages), None
    # when the compiled kernel does not say.
    num_stages: int | None = None
    # Slow libdevice transcendental routines its PTX inlines (`libdevice_math_calls`), None
    # when the compiled kernel carries no PTX.
    libdevice_math: int | None = None
    # Bytes of local arrays per thread the PTX declares (`__local_depot`), before ptxas
    # allocates registers; None when the compiled kernel carries no PTX.
    local_array_bytes: int | None = None

    @property
    def ctas(self) -> int:
        return self.grid[0] * self.grid[1] * self.grid[2]

    @property
    def spilled_bytes(self) -> int:
        """Local memory per thread that holds spilled registers: the reservation less the
        PTX's own local arrays, which ptxas lays out in a frame aligned to 8 bytes (a
        `tl.sin` declares 28 bytes of them for its large-argument reduction and reserves 32,
        with no spill)."""
        arrays = self.local_array_bytes or 0
        return max(0, self.spill_bytes - -(-arrays // LOCAL_FRAME_ALIGN) * LOCAL_FRAME_ALIGN)


@contextlib.contextmanager
def capture() -> Iterator[list[Launch]]:
    """Record every Triton kernel launched inside the block, with its GPU time when CUDA
    is there (nothing when Triton's internals are not as expected: the statistics are then
    missing, the call unchanged)."""
    seen: list[Launch] = []
    try:
        from triton import knobs
        from triton.compiler.compiler import CompiledKernel
    except Exception:  # no Triton, or a layout this code does not know
        yield seen
        return
    original = CompiledKernel.launch_metadata

    def spy(self: Any, grid: Any, stream: Any, *args: Any) -> Any:
        result = original(self, grid, stream, *args)  # loads the kernel: n_regs is known after
        with contextlib.suppress(Exception):
            seen.append(_launch(self, grid))
        return result

    timer = _EventTimer.if_cuda()
    CompiledKernel.launch_metadata = spy
    if timer is not None:
        knobs.runtime.launch_enter_hook.add(timer.enter)
        knobs.runtime.launch_exit_hook.add(timer.exit)
    try:
        yield seen
    finally:
        CompiledKernel.launch_metadata = original
        if timer is not None:
            knobs.runtime.launch_enter_hook.remove(timer.enter)
            knobs.runtime.launch_exit_hook.remove(timer.exit)
            times = timer.durations_us()
            if len(times) == len(seen):  # one enter/exit pair per launch the spy saw
                seen[:] = [
                    dataclasses.replace(ln, duration_us=t)
                    for ln, t in zip(seen, times, strict=True)
                ]


class _EventTimer:
    """CUDA events recorded by Triton's launch hooks around each launch."""

    def __init__(self, event: Callable[[], Any], synchronize: Callable[[], None]):
        self.event, self.synchronize = event, synchronize
        self.pairs: list[list[Any]] = []

    @classmethod
    def if_cuda(cls) -> _EventTimer | None:
        try:
            import torch

            if not torch.cuda.is_available():
                return None
        except Exception:
            return None
        return cls(lambda: torch.cuda.Event(enable_timing=True), torch.cuda.synchronize)

    def enter(self, *_: Any) -> None:
        start = self.event()
        start.record()
        self.pairs.append([start, None])

    def exit(self, *_: Any) -> None:
        if self.pairs and self.pairs[-1][1] is None:
            end = self.event()
            end.record()
            self.pairs[-1][1] = end

    def durations_us(self) -> list[float]:
        if not self.pairs or any(end is None for _, end in self.pairs):
            return []
        try:
            self.synchronize()
            return [1e3 * float(start.elapsed_time(end)) for start, end in self.pairs]
        except Exception:
            return []


def _launch(kernel: Any, grid: Any) -> Launch:
    dims = [int(g) for g in grid][:3]
    dims += [1] * (3 - len(dims))
    meta = kernel.metadata
    return Launch(
        name=str(getattr(kernel, "name", "") or getattr(meta, "name", "")),
        grid=(dims[0], dims[1], dims[2]),
        num_warps=int(meta.num_warps),
        registers=int(getattr(kernel, "n_regs", 0) or 0),
        shared_bytes=int(getattr(meta, "shared", 0) or 0),
        spill_bytes=4 * int(getattr(kernel, "n_spills", 0) or 0),
        num_stages=_int_or_none(getattr(meta, "num_stages", None)),
        libdevice_math=_libdevice_math(kernel),
        local_array_bytes=_local_arrays(kernel),
    )


def _ptx(kernel: Any) -> str | None:
    asm = getattr(kernel, "asm", None)
    ptx = asm.get("ptx") if isinstance(asm, Mapping) else None
    return ptx if isinstance(ptx, str) else None


def _libdevice_math(kernel: Any) -> int | None:
    ptx = _ptx(kernel)
    return libdevice_math_calls(ptx) if ptx is not None else None


def _local_arrays(kernel: Any) -> int | None:
    ptx = _ptx(kernel)
    return local_array_bytes(ptx) if ptx is not None else None


def _int_or_none(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def device_limits(props: Any = None) -> dict[str, int]:
    """Per-SM limits from torch's device properties, compute capability 9.0 where absent."""
    out = dict(SM90)
    if props is None:
        return out
    for key, attr in (
        ("regs_per_sm", "regs_per_multiprocessor"),
        ("smem_per_sm", "shared_memory_per_multiprocessor"),
    ):
        value = getattr(props, attr, None)
        if isinstance(value, int) and value > 0:
            out[key] = value
    threads = getattr(props, "max_threads_per_multi_processor", None)
    if isinstance(threads, int) and threads > 0:
        out["max_warps_per_sm"] = threads // 32
    return out


def occupancy(launch: Launch, limits: Mapping[str, int]) -> dict[str, float]:
    """Blocks per SM each resource allows (Nsight Compute's occupancy limiters) and the
    theoretical occupancy they give."""
    warps = max(1, launch.num_warps)
    by_warps = limits["max_warps_per_sm"] // warps
    by_blocks = limits["max_blocks_per_sm"]
    if launch.registers > 0:
        per_warp = math.ceil(launch.registers * 32 / REG_ALLOC_UNIT) * REG_ALLOC_UNIT
        by_regs = (limits["regs_per_sm"] // per_warp) // warps
    else:
        by_regs = by_blocks
    per_block = (
        math.ceil(launch.shared_bytes / SMEM_ALLOC_UNIT) * SMEM_ALLOC_UNIT + SMEM_RESERVED_PER_BLOCK
    )
    by_smem = min(by_blocks, _carveout(per_block * by_warps, limits) // per_block)
    resident = max(0, min(by_warps, by_blocks, by_regs, by_smem))
    return {
        "occupancy_limit_registers": float(by_regs),
        "occupancy_limit_shared_mem": float(by_smem),
        "occupancy_limit_warps": float(by_warps),
        "occupancy_limit_blocks": float(by_blocks),
        "theoretical_occupancy_pct": 100.0 * resident * warps / limits["max_warps_per_sm"],
    }


def _carveout(wanted: int, limits: Mapping[str, int]) -> int:
    """Bytes of the carveout the driver picks for `wanted` bytes of shared memory."""
    top = limits["smem_per_sm"]
    for kb in SMEM_CARVEOUTS_KB:
        size = kb * 1024
        if kb >= SMEM_MIN_CARVEOUT_KB and size >= wanted:
            return min(size, top)
    return top


def heaviest(launches: Sequence[Launch]) -> Launch | None:
    """The launch that carries the call: the longest when the launches were timed, else
    the first (a main kernel comes before its combine or merge pass)."""
    if not launches:
        return None
    if all(ln.duration_us is not None for ln in launches):
        return max(launches, key=lambda ln: ln.duration_us or 0.0)
    return launches[0]


def launch_metrics(
    launches: Sequence[Launch], sm_count: int | None, limits: Mapping[str, int]
) -> dict[str, float]:
    """The catalog metrics of the heaviest launch: grid, block, registers, shared memory,
    occupancy limiters, waves, tail wave, idle share and CTAs per SM."""
    main = heaviest(launches)
    if main is None:
        return {}
    out: dict[str, float] = {
        "grid_size": float(main.ctas),
        "block_size": float(32 * main.num_warps),
        "shared_mem_per_block_kb": main.shared_bytes / 1024.0,
    }
    if main.num_stages is not None:
        out["pipeline_stages"] = float(main.num_stages)
    if main.libdevice_math is not None:
        out["libdevice_math_calls"] = float(main.libdevice_math)
    if main.registers > 0:
        out["registers_per_thread"] = float(main.registers)
        # Known only once the kernel is loaded, like the registers: 0 is a measured zero.
        out["spill_bytes_per_thread"] = float(main.spilled_bytes)
        if main.local_array_bytes:
            out["local_array_bytes_per_thread"] = float(main.local_array_bytes)
    occ = occupancy(main, limits)
    out.update(occ)
    if sm_count:
        out["ctas_per_sm"] = main.ctas / sm_count
        resident = min(
            occ[k]
            for k in (
                "occupancy_limit_registers",
                "occupancy_limit_shared_mem",
                "occupancy_limit_warps",
                "occupancy_limit_blocks",
            )
        )
        if resident > 0:
            waves = main.ctas / (resident * sm_count)
            out["waves_per_sm"] = waves
            out["tail_wave_pct"] = tail_wave_pct(waves)
            idle = wave_idle_pct(waves, out["ctas_per_sm"])
            if idle is not None:
                out["wave_idle_pct"] = idle
    return out


def summary(launches: Sequence[Launch]) -> list[dict[str, Any]]:
    """The launches as plain rows (for results files)."""
    return [
        {
            "name": ln.name,
            "grid": list(ln.grid),
            "num_warps": ln.num_warps,
            "registers": ln.registers,
            "shared_bytes": ln.shared_bytes,
            "duration_us": None if ln.duration_us is None else round(ln.duration_us, 3),
            "spill_bytes": ln.spill_bytes,
            "num_stages": ln.num_stages,
            "libdevice_math": ln.libdevice_math,
            "local_array_bytes": ln.local_array_bytes,
        }
        for ln in launches
    ]


def from_summary(rows: Sequence[Mapping[str, Any]] | None) -> list[Launch]:
    """The launches back from `summary`'s rows (as a results row carries them)."""
    return [
        Launch(
            r["name"],
            (r["grid"][0], r["grid"][1], r["grid"][2]),
            r["num_warps"],
            r["registers"],
            r["shared_bytes"],
            r.get("duration_us"),
            r.get("spill_bytes", 0),
            r.get("num_stages"),
            r.get("libdevice_math"),
            r.get("local_array_bytes"),
        )
        for r in rows or []
    ]
