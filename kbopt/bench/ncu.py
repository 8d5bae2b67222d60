"""Nsight Compute: which counters kbopt reads, how it runs `ncu`, and how it parses the CSV.

What is read (canonical name <- Nsight Compute metric names; see `NCU_READS`):

| canonical metric            | ncu metric(s)                                                          | combine   |
|-----------------------------|------------------------------------------------------------------------|-----------|
| duration_us                 | gpu__time_duration.sum                                                 | -         |
| dram_throughput_pct         | dram__throughput.avg.pct_of_peak_sustained_elapsed                     | -         |
| tensor_core_util_pct        | sm__pipe_tensor_op_gmma_cycles_active.avg.pct_of_peak_sustained_active | max       |
|                             | sm__pipe_tensor_op_hmma_cycles_active.avg.pct_of_peak_sustained_active |           |
| sm_throughput_pct           | sm__throughput.avg.pct_of_peak_sustained_elapsed                       | -         |
| achieved_occupancy_pct      | sm__warps_active.avg.pct_of_peak_sustained_active                      | -         |
| theoretical_occupancy_pct   | sm__maximum_warps_per_active_cycle_pct                                 | -         |
| registers_per_thread        | launch__registers_per_thread                                           | -         |
| shared_mem_per_block_kb     | launch__shared_mem_per_block_static + ..._dynamic                      | sum       |
| local_memory_bytes          | l1tex__t_bytes_pipe_lsu_mem_local_op_ld.sum + ..._op_st.sum            | sum       |
| l2_hit_rate_pct             | lts__t_sector_hit_rate.pct                                             | -         |
| l1_hit_rate_pct             | l1tex__t_sector_hit_rate.pct                                           | -         |
| grid_size / block_size      | launch__grid_size / launch__block_size                                 | -         |
| waves_per_sm                | launch__waves_per_multiprocessor                                       | -         |

Hopper's warpgroup MMA (wgmma) shows in the `gmma` pipe and the older mma.sync in the
`hmma` pipe; a Triton kernel may use either, so tensor-core utilization is the larger
of the two.  Local-memory traffic counts spill loads and stores.

Two CSV shapes are understood, both from ncu's documented `--csv` output:

- `--page raw` (what `run_ncu` asks for): one header row (`"ID","Process ID",...,"Kernel
  Name",...,<metric names>`), one row of units, then one row per profiled kernel launch;
- `--page details` (the default page): one row per (kernel, section, metric) with the
  columns `Section Name, Metric Name, Metric Unit, Metric Value`; both the raw metric names
  and the section display names ("DRAM Throughput", "Achieved Occupancy", ...) are mapped.

Values may carry thousands separators ("1,024") and `n/a`; lines before the header
(`==PROF==` messages, the program's own output) are skipped.
"""

from __future__ import annotations

import csv
import io
import os
import re
import shutil
import subprocess
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from kbopt.vocab import METRICS


@dataclass(frozen=True)
class CounterRead:
    """One canonical metric and the Nsight Compute metrics it is computed from."""

    metric: str
    ncu_names: tuple[str, ...]
    combine: str = "first"  # first | sum | max
    display_names: tuple[str, ...] = ()  # names in `--page details` sections


NCU_READS: tuple[CounterRead, ...] = (
    CounterRead("duration_us", ("gpu__time_duration.sum",), display_names=("Duration",)),
    CounterRead(
        "dram_throughput_pct",
        ("dram__throughput.avg.pct_of_peak_sustained_elapsed",),
        display_names=("DRAM Throughput",),
    ),
    CounterRead(
        "tensor_core_util_pct",
        (
            "sm__pipe_tensor_op_gmma_cycles_active.avg.pct_of_peak_sustained_active",
            "sm__pipe_tensor_op_hmma_cycles_active.avg.pct_of_peak_sustained_active",
        ),
        combine="max",
    ),
    CounterRead(
        "sm_throughput_pct",
        ("sm__throughput.avg.pct_of_peak_sustained_elapsed",),
        display_names=("Compute (SM) Throughput",),
    ),
    CounterRead(
        "achieved_occupancy_pct",
        ("sm__warps_active.avg.pct_of_peak_sustained_active",),
        display_names=("Achieved Occupancy",),
    ),
    CounterRead(
        "theoretical_occupancy_pct",
        ("sm__maximum_warps_per_active_cycle_pct",),
        display_names=("Theoretical Occupancy",),
    ),
    CounterRead(
        "registers_per_thread",
        ("launch__registers_per_thread",),
        display_names=("Registers Per Thread",),
    ),
    CounterRead(
        "shared_mem_per_block_kb",
        ("launch__shared_mem_per_block_static", "launch__shared_mem_per_block_dynamic"),
        combine="sum",
        display_names=("Static Shared Memory Per Block", "Dynamic Shared Memory Per Block"),
    ),
    CounterRead(
        "local_memory_bytes",
        (
            "l1tex__t_bytes_pipe_lsu_mem_local_op_ld.sum",
            "l1tex__t_bytes_pipe_lsu_mem_local_op_st.sum",
        ),
        combine="sum",
    ),
    CounterRead("l2_hit_rate_pct", ("lts__t_sector_hit_rate.pct",), display_names=("L2 Hit Rate",)),
    CounterRead(
        "l1_hit_rate_pct", ("l1tex__t_sector_hit_rate.pct",), display_names=("L1/TEX Hit Rate",)
    ),
    CounterRead("grid_size", ("launch__grid_size",), display_names=("Grid Size",)),
    CounterRead("block_size", ("launch__block_size",), display_names=("Block Size",)),
    CounterRead(
        "waves_per_sm", ("launch__waves_per_multiprocessor",), display_names=("Waves Per SM",)
    ),
)

# Unit scale factors into the canonical unit of each metric (vocab.METRICS[...].unit).
_TIME_TO_US = {"nsecond": 1e-3, "ns": 1e-3, "usecond": 1.0, "us": 1.0, "msecond": 1e3, "ms": 1e3}
_TIME_TO_US["second"] = 1e6
_BYTES = {
    "byte": 1.0,
    "kbyte": 1e3,
    "mbyte": 1e6,
    "gbyte": 1e9,
    "kibyte": 1024.0,
    "mibyte": 1024.0**2,
    "gibyte": 1024.0**3,
}
_UNIT_FIXES = {"": 1.0, "%": 1.0, "register/thread": 1.0, "thread": 1.0, "block": 1.0}


class NcuParseError(ValueError):
    """The text is not Nsight Compute CSV of a known shape."""


@dataclass
class KernelCounters:
    """One profiled kernel launch: its name and canonical metrics."""

    launch_id: int
    name: str
    metrics: dict[str, float] = field(default_factory=dict)
    raw: dict[str, tuple[str, str]] = field(default_factory=dict)  # ncu name -> (value, unit)

    @property
    def short_name(self) -> str:
        """The kernel's function name without template arguments or parameter lists."""
        return re.split(r"[(<]", self.name, maxsplit=1)[0].strip() or self.name


@dataclass
class NcuOutcome:
    """What a profiling attempt gave: kernels, or the reason counters were unavailable."""

    kernels: list[KernelCounters]
    command: list[str]
    unavailable: str | None = None
    log: str = ""

    @property
    def available(self) -> bool:
        return self.unavailable is None and bool(self.kernels)


def requested_metric_names(reads: Sequence[CounterRead] = NCU_READS) -> list[str]:
    names: list[str] = []
    for r in reads:
        names.extend(n for n in r.ncu_names if n not in names)
    return names


def _number(text: str) -> float | None:
    t = text.strip().replace(",", "").replace("\u202f", "")
    if not t or t.lower() in {"n/a", "nan", "-", "(!)"}:
        return None
    try:
        return float(t)
    except ValueError:
        return None


def _to_canonical(metric: str, value: float, unit: str) -> float:
    unit_l = unit.strip().lower()
    target = METRICS[metric].unit
    if target == "us":
        if unit_l not in _TIME_TO_US:
            raise NcuParseError(f"duration in unknown unit {unit!r}")
        return value * _TIME_TO_US[unit_l]
    if target in {"bytes", "KiB"}:
        unit_l = unit_l.split("/")[0]  # "Kbyte/block" -> "kbyte"
        if unit_l not in _BYTES and unit_l != "":
            raise NcuParseError(f"{metric}: unknown byte unit {unit!r}")
        in_bytes = value * _BYTES.get(unit_l, 1.0)
        return in_bytes / 1024.0 if target == "KiB" else in_bytes
    return value


def _combine(read: CounterRead, values: list[float]) -> float:
    if read.combine == "sum":
        return sum(values)
    if read.combine == "max":
        return max(values)
    return values[0]


def canonical_metrics(raw: Mapping[str, tuple[str, str]]) -> dict[str, float]:
    """Canonical metrics from `{ncu or display name: (value text, unit)}` of one kernel."""
    out: dict[str, float] = {}
    for read in NCU_READS:
        values: list[float] = []
        for name in (*read.ncu_names, *read.display_names):
            if name not in raw:
                continue
            text, unit = raw[name]
            number = _number(text)
            if number is None:
                continue
            values.append(_to_canonical(read.metric, number, unit))
            if read.combine == "first":
                break
        if values:
            out[read.metric] = _combine(read, values)
    return out


def _csv_rows(text: str) -> list[list[str]]:
    lines = text.splitlines()
    start = next((i for i, line in enumerate(lines) if line.startswith('"ID"')), None)
    if start is None:
        raise NcuParseError('no ncu CSV header (a line starting with "ID") in the output')
    return [row for row in csv.reader(io.StringIO("\n".join(lines[start:]))) if row]


def parse_csv(text: str) -> list[KernelCounters]:
    """Kernels of an `ncu --csv` output, `--page raw` or `--page details`, in launch order."""
    rows = _csv_rows(text)
    header = rows[0]
    if "Kernel Name" not in header or "ID" not in header:
        raise NcuParseError("the ncu CSV header has no 'ID' or 'Kernel Name' column")
    if "Metric Name" in header:
        return _parse_details(header, rows[1:])
    return _parse_raw(header, rows[1:])


def _parse_raw(header: list[str], body: list[list[str]]) -> list[KernelCounters]:
    id_col, name_col = header.index("ID"), header.index("Kernel Name")
    units: list[str] = [""] * len(header)
    if body and not body[0][id_col].strip():  # the units row has an empty ID cell
        units, body = body[0] + [""] * (len(header) - len(body[0])), body[1:]
    kernels = []
    for row in body:
        if len(row) != len(header):
            raise NcuParseError(f"a kernel row has {len(row)} cells, the header {len(header)}")
        raw = {name: (row[i], units[i]) for i, name in enumerate(header)}
        kernels.append(
            KernelCounters(
                launch_id=int(_number(row[id_col]) or 0),
                name=row[name_col],
                metrics=canonical_metrics(raw),
                raw=raw,
            )
        )
    return kernels


def _parse_details(header: list[str], body: list[list[str]]) -> list[KernelCounters]:
    col = {name: header.index(name) for name in ("ID", "Kernel Name", "Metric Name")}
    unit_col = header.index("Metric Unit") if "Metric Unit" in header else None
    value_col = header.index("Metric Value")
    by_id: dict[int, KernelCounters] = {}
    for row in body:
        if len(row) < len(header):
            continue
        launch = int(_number(row[col["ID"]]) or 0)
        k = by_id.setdefault(launch, KernelCounters(launch, row[col["Kernel Name"]]))
        unit = row[unit_col] if unit_col is not None else ""
        k.raw.setdefault(row[col["Metric Name"]], (row[value_col], unit))
    for k in by_id.values():
        k.metrics = canonical_metrics(k.raw)
    return [by_id[i] for i in sorted(by_id)]


# Metrics that add up across the kernels of one operation; the other percentages are
# weighted by each kernel's duration, and sizes (registers, shared memory) take the max.
_SUMMED = {"duration_us", "local_memory_bytes"}
_MAXED = {"registers_per_thread", "shared_mem_per_block_kb"}


def aggregate(kernels: Sequence[KernelCounters]) -> dict[str, float]:
    """One set of metrics for a multi-kernel operation (e.g. split-KV + combine)."""
    if not kernels:
        return {}
    out: dict[str, float] = {"kernel_count": float(len(kernels))}
    total = sum(k.metrics.get("duration_us", 0.0) for k in kernels)
    longest = max(kernels, key=lambda k: k.metrics.get("duration_us", 0.0))
    names = {m for k in kernels for m in k.metrics}
    for m in names:
        have = [k for k in kernels if m in k.metrics]
        if m in _SUMMED:
            out[m] = sum(k.metrics[m] for k in have)
        elif m in _MAXED:
            out[m] = max(k.metrics[m] for k in have)
        elif m in {"grid_size", "block_size", "waves_per_sm"}:
            if m in longest.metrics:
                out[m] = longest.metrics[m]
        elif total > 0 and all("duration_us" in k.metrics for k in have):
            weight = sum(k.metrics["duration_us"] for k in have)
            out[m] = sum(k.metrics[m] * k.metrics["duration_us"] for k in have) / max(weight, 1e-9)
        else:
            out[m] = sum(k.metrics[m] for k in have) / len(have)
    return out


# Messages by which ncu says it cannot read counters on this machine.
_NO_COUNTERS = (
    "ERR_NVGPUCTRPERM",
    "LibraryNotLoaded",
    "Failed to initialize the profiler",
    "not supported on this device",
    "Profiling is not supported",
    "No kernels were profiled",
)


def _missing_metric(log: str, requested: Sequence[str]) -> str | None:
    """A requested metric that an `==ERROR==` line names (this GPU or ncu lacks it)."""
    for line in log.splitlines():
        if "==ERROR==" in line:
            for name in requested:
                if name in line:
                    return name
    return None


def build_command(
    target: Sequence[str], metrics: Sequence[str], *, ncu: str = "ncu", page: str = "raw"
) -> list[str]:
    """The ncu invocation: CSV, base units, clocks left alone, only the profiled range.

    `--profile-from-start off` makes ncu wait for `cudaProfilerStart` (torch.cuda.profiler.start),
    so warm-up launches and JIT compilation stay out of the report; the target calls it around
    the one measured call.
    """
    return [
        ncu,
        "--csv",
        "--page",
        page,
        "--print-units",
        "base",
        "--clock-control",
        "none",
        "--profile-from-start",
        "off",
        "--metrics",
        ",".join(metrics),
        *target,
    ]


def run_ncu(
    target: Sequence[str],
    *,
    ncu: str | None = None,
    timeout_s: float = 300.0,
    env: Mapping[str, str] | None = None,
    retries: int = 3,
    cwd: Path | None = None,
) -> NcuOutcome:
    """Profile `target` (a command line); never raises for a missing or locked profiler.

    A metric this GPU does not have is dropped and the run retried (up to `retries`
    times), so one unknown counter does not cost all the others.
    """
    exe = ncu or os.environ.get("KBOPT_NCU") or shutil.which("ncu")
    if not exe:
        return NcuOutcome([], [], unavailable="ncu is not on PATH")
    metrics = requested_metric_names()
    command: list[str] = []
    log = ""
    for _ in range(retries + 1):
        command = build_command(target, metrics, ncu=exe)
        try:
            proc = subprocess.run(
                command,
                capture_output=True,
                text=True,
                timeout=timeout_s,
                env={**os.environ, **(env or {})},
                cwd=cwd,
                check=False,
            )
        except subprocess.TimeoutExpired:
            return NcuOutcome([], command, unavailable=f"ncu ran past {timeout_s:.0f} s")
        except OSError as exc:
            return NcuOutcome([], command, unavailable=f"cannot run ncu: {exc}")
        log = proc.stdout + "\n" + proc.stderr
        missing = _missing_metric(log, metrics)
        if missing is not None:
            metrics = [m for m in metrics if m != missing]
            continue
        for marker in _NO_COUNTERS:
            if marker.lower() in log.lower():
                return NcuOutcome([], command, unavailable=f"ncu: {marker}", log=log[-4000:])
        try:
            kernels = parse_csv(proc.stdout)
        except NcuParseError as exc:
            return NcuOutcome(
                [], command, unavailable=f"ncu output not understood: {exc}", log=log[-4000:]
            )
        if proc.returncode != 0 and not kernels:
            return NcuOutcome(
                [], command, unavailable=f"ncu exited {proc.returncode}", log=log[-4000:]
            )
        return NcuOutcome(kernels, command, log=log[-4000:])
    return NcuOutcome([], command, unavailable="ncu rejected too many metrics", log=log[-4000:])
