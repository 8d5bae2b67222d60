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
| issue_slot_util_pct         | smsp__issue_active.avg.pct_of_peak_sustained_active                    | -         |
| shared_bank_conflicts       | l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum + ..._st.sum  | sum       |
| global_reduction_sectors    | lts__t_sectors_op_red.sum + lts__t_sectors_op_atom.sum                 | sum       |
| dram_bytes                  | dram__bytes_read.sum + dram__bytes_write.sum                           | sum       |
| occupancy_limit_*           | launch__occupancy_limit_registers / _shared_mem / _warps / _blocks     | -         |
| stall_<reason>_pct          | smsp__average_warps_issue_stalled_<reason>_per_issue_active.ratio /    | ratio     |
|                             | smsp__average_warps_active_per_issue_active.ratio                      |           |
| sectors_per_request         | l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum / ..._requests_...      | ratio     |
| global_load_efficiency_pct  | smsp__sass_average_data_bytes_per_sector_mem_global_op_ld.pct          | -         |
| global_store_efficiency_pct | smsp__sass_average_data_bytes_per_sector_mem_global_op_st.pct          | -         |
| tail_wave_pct, ctas_per_sm  | launch__waves_per_multiprocessor; launch__grid_size / SM count         | derived   |
| wave_idle_pct               | the waves, or under one wave the CTAs per SM (`kbopt.waves`)           | derived   |

`profile_launches` runs ncu twice within a time budget: a timing pass over every launch
of the profiled call, then every counter for the few kernels that carry the time (ncu's
kernel-name filter), so a wrapper's set-up kernels cost one cheap pass, not fifty.

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
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from kbopt.vocab import METRICS, STALL_REASONS, metric_value_problem
from kbopt.waves import tail_wave_pct, wave_idle_pct


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
    # Requested over fetched bytes of global loads (NVIDIA's nvbench reports the same
    # counter as "LoadEff"): tells scattered or strided scalar loads, which waste most of
    # each sector, from vectorized ones, where sectors per request alone cannot (both
    # can touch 16 sectors per request).
    CounterRead(
        "global_load_efficiency_pct",
        ("smsp__sass_average_data_bytes_per_sector_mem_global_op_ld.pct",),
    ),
    # The same for global stores (nvbench's "StoreEff"): a transpose that writes one
    # 4-byte element per row of a column-major output fetches a 32-byte sector per store,
    # which no load counter shows.
    CounterRead(
        "global_store_efficiency_pct",
        ("smsp__sass_average_data_bytes_per_sector_mem_global_op_st.pct",),
    ),
    CounterRead(
        "issue_slot_util_pct",
        ("smsp__issue_active.avg.pct_of_peak_sustained_active",),
        display_names=("Issue Slots Busy",),
    ),
    CounterRead(
        "shared_bank_conflicts",
        (
            "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum",
            "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_st.sum",
        ),
        combine="sum",
    ),
    CounterRead(
        "global_reduction_sectors",
        ("lts__t_sectors_op_red.sum", "lts__t_sectors_op_atom.sum"),
        combine="sum",
    ),
    CounterRead("dram_bytes", ("dram__bytes_read.sum", "dram__bytes_write.sum"), combine="sum"),
    CounterRead(
        "occupancy_limit_registers",
        ("launch__occupancy_limit_registers",),
        display_names=("Block Limit Registers",),
    ),
    CounterRead(
        "occupancy_limit_shared_mem",
        ("launch__occupancy_limit_shared_mem",),
        display_names=("Block Limit Shared Mem",),
    ),
    CounterRead(
        "occupancy_limit_warps",
        ("launch__occupancy_limit_warps",),
        display_names=("Block Limit Warps",),
    ),
    CounterRead(
        "occupancy_limit_blocks",
        ("launch__occupancy_limit_blocks",),
        display_names=("Block Limit SM",),
    ),
)

# Read from the same CSV but combined by `derived_metrics` (ratios of two counters):
# the stall reasons as shares of the cycles between two issued instructions (Nsight
# Compute's own warp-state view), and global-load sectors per request.
WARPS_PER_ISSUE = "smsp__average_warps_active_per_issue_active.ratio"
STALL_NCU = {
    f"stall_{reason}_pct": f"smsp__average_warps_issue_stalled_{reason}_per_issue_active.ratio"
    for reason in STALL_REASONS
}
GLOBAL_LD_SECTORS = "l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum"
GLOBAL_LD_REQUESTS = "l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum"
GLOBAL_ST_SECTORS = "l1tex__t_sectors_pipe_lsu_mem_global_op_st.sum"
DRAM_WRITE = "dram__bytes_write.sum"
DRAM_READ = "dram__bytes_read.sum"
SM_COUNT = "device__attribute_multiprocessor_count"
SHARED_WAVEFRONTS = "l1tex__data_pipe_lsu_wavefronts_mem_shared.sum"
BANK_CONFLICTS = (
    "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum",
    "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_st.sum",
)
# canonical metric -> the ncu metrics `derived_metrics` combines into it
DERIVED_READS: dict[str, tuple[str, ...]] = {
    **{metric: (name, WARPS_PER_ISSUE) for metric, name in STALL_NCU.items()},
    "sectors_per_request": (GLOBAL_LD_SECTORS, GLOBAL_LD_REQUESTS),
    "shared_bank_conflict_pct": (*BANK_CONFLICTS, SHARED_WAVEFRONTS),
    "tail_wave_pct": ("launch__waves_per_multiprocessor",),
    "ctas_per_sm": ("launch__grid_size", SM_COUNT),
    "wave_idle_pct": ("launch__waves_per_multiprocessor", "launch__grid_size", SM_COUNT),
}
# The SM clock during the launch (ncu's "SM Frequency"): with clocks left alone
# (--clock-control none) two launches' durations compare cycles only at the same clock, and
# a CSV without it cannot say whether a time ratio is the kernels' or the clocks'.
SM_CLOCK = "sm__cycles_elapsed.avg.per_second"
# Also requested, though no canonical metric reads them directly.
EXTRA_REQUESTS = (
    WARPS_PER_ISSUE,
    *STALL_NCU.values(),
    GLOBAL_LD_SECTORS,
    GLOBAL_LD_REQUESTS,
    GLOBAL_ST_SECTORS,
    SM_COUNT,
    SHARED_WAVEFRONTS,
    SM_CLOCK,
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
    # Counters ncu reported outside their possible range (canonical name -> value), left
    # out of `metrics` (see `without_impossible`).
    rejected: dict[str, float] = field(default_factory=dict)

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
    # Every launch of the profiled call, (name, GPU time in us), in launch order, from the
    # timing pass of `profile_launches`; `kernels` then holds the ones that carry the time.
    launches: list[tuple[str, float]] = field(default_factory=list)
    skipped_metrics: list[str] = field(default_factory=list)  # this ncu or GPU lacks them

    @property
    def available(self) -> bool:
        return self.unavailable is None and bool(self.kernels)


def requested_metric_names(reads: Sequence[CounterRead] = NCU_READS) -> list[str]:
    names: list[str] = []
    for r in reads:
        names.extend(n for n in r.ncu_names if n not in names)
    if reads is NCU_READS:
        names.extend(n for n in EXTRA_REQUESTS if n not in names)
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
    if _raw_value(raw, GLOBAL_LD_SECTORS) == 0:
        # A kernel that loads nothing from global memory (a fill) reads as 0% efficient:
        # no loads, not wasted ones.  Averaged into an operation's figure by duration,
        # that zero made FlagGems' embedding backward (a fill, a scatter, a cast) look
        # like strided loads on the H200.
        out.pop("global_load_efficiency_pct", None)
    elif out.get("global_load_efficiency_pct") == 0:
        # Sectors were fetched, yet no byte of them was requested: the efficiency counter
        # counts the bytes of LDG instructions only, and every load of this kernel was an
        # asynchronous copy to shared memory (cp.async, LDGSTS: Triton's pipelined tl.load),
        # whose sectors the LSU counts all the same.  Not measured, rather than 0%: vLLM's
        # persistent matmul (blind set 52) read as entirely wasted loads.
        out.pop("global_load_efficiency_pct", None)
    if not _stores_carry_traffic(raw) or out.get("global_store_efficiency_pct") == 0:
        # No global stores, or too few to matter (an argmax's one value a row, a norm's
        # statistics): how well they fill their sectors cannot set the kernel's time.
        # Zero with stores made is the loads' case above (bulk or asynchronous copies).
        out.pop("global_store_efficiency_pct", None)
    out.update(derived_metrics(raw, out))
    if _side_stream_loads(raw):
        # The LSU's global loads fetched under `SIDE_STREAM_SHARE` of the bytes read from
        # DRAM: the operands came another way (TMA), and how well these few loads use
        # their sectors (a group-offsets vector read by every thread) says nothing about
        # the kernel's traffic.  FlagGems' TMA grouped GEMM (blind set 52) read as 12.5%
        # efficient from 4-byte offset loads beside 954 MB of TMA reads.
        out.pop("global_load_efficiency_pct", None)
        out.pop("sectors_per_request", None)
    return out


# Below this share of the DRAM bytes read, the LSU's global loads are a side stream.
SIDE_STREAM_SHARE = 0.05
SECTOR_BYTES = 32


def _side_stream_loads(raw: Mapping[str, tuple[str, str]]) -> bool:
    """Whether the LSU's global loads fetched under `SIDE_STREAM_SHARE` of the bytes the
    kernel read from DRAM (both counters measured, the DRAM reads above 1 MB so a kernel
    served from L2 is never judged by it)."""
    sectors = _raw_value(raw, GLOBAL_LD_SECTORS)
    dram_read = _raw_value(raw, DRAM_READ)
    if not sectors or dram_read is None:
        return False
    dram_read = _to_canonical("dram_bytes", dram_read, raw[DRAM_READ][1])  # in bytes
    if dram_read < 1e6:
        return False
    return sectors * SECTOR_BYTES < SIDE_STREAM_SHARE * dram_read


# Below this share of the bytes the kernel moved to and from DRAM, the sectors its global
# stores fill are too few for their efficiency to matter.
STORE_TRAFFIC_SHARE = 0.05


def _stores_carry_traffic(raw: Mapping[str, tuple[str, str]]) -> bool:
    """Whether the LSU's global stores filled at least `STORE_TRAFFIC_SHARE` of the bytes
    the kernel read from and wrote to DRAM (their sectors counted at 32 bytes each: a
    scattered store fills a whole sector for its 4 bytes, which the L2 merges before
    DRAM).  Without the DRAM counters, any store sector counts."""
    sectors = _raw_value(raw, GLOBAL_ST_SECTORS)
    if not sectors:
        return False
    moved = 0.0
    for name in (DRAM_READ, DRAM_WRITE):
        value = _raw_value(raw, name)
        if value is not None:
            moved += _to_canonical("dram_bytes", value, raw[name][1])
    return moved <= 0 or sectors * SECTOR_BYTES >= STORE_TRAFFIC_SHARE * moved


def _raw_value(raw: Mapping[str, tuple[str, str]], name: str) -> float | None:
    return _number(raw[name][0]) if name in raw else None


def derived_metrics(
    raw: Mapping[str, tuple[str, str]], direct: Mapping[str, float]
) -> dict[str, float]:
    """Metrics that combine counters of one launch (see `DERIVED_READS`).

    * `stall_<reason>_pct` = 100 x warps stalled for the reason per issue-active cycle /
      warps active per issue-active cycle: the share of the cycles between two issued
      instructions spent waiting for that reason (what Nsight Compute's warp-state rules
      compare with 30%);
    * `sectors_per_request`: global-load sectors / requests (4 when each thread of a warp
      reads 4 consecutive bytes; 16 or more with 16-byte vectors; many with scattered
      addresses per thread);
    * `tail_wave_pct`: the share of the last wave's CTA slots left idle,
      100 x (ceil(waves) - waves) / ceil(waves) of the waves per SM;
    * `ctas_per_sm`: grid size / SM count, when the CSV carries the device's SM count;
    * `wave_idle_pct`: the share of the launch's SM time the grid leaves idle
      (`kbopt.waves`: over the waves, or under one wave over the SMs);
    * `shared_bank_conflict_pct`: bank conflicts per shared-memory wavefront (the extra
      replays conflicts cause, as Nsight Compute's shared-memory rule compares them): a
      reduction that leaves a few thousand conflicts among millions of wavefronts is not
      conflict-bound.
    """
    out: dict[str, float] = {}
    per_issue = _raw_value(raw, WARPS_PER_ISSUE)
    if per_issue and per_issue > 0:
        for metric, name in STALL_NCU.items():
            v = _raw_value(raw, name)
            if v is not None:
                out[metric] = 100.0 * v / per_issue
    sectors, requests = _raw_value(raw, GLOBAL_LD_SECTORS), _raw_value(raw, GLOBAL_LD_REQUESTS)
    if sectors is not None and requests:
        out["sectors_per_request"] = sectors / requests
    wavefronts, conflicts = _raw_value(raw, SHARED_WAVEFRONTS), direct.get("shared_bank_conflicts")
    if wavefronts and conflicts is not None:
        out["shared_bank_conflict_pct"] = 100.0 * conflicts / wavefronts
    waves = direct.get("waves_per_sm")
    if waves is not None and waves > 0:
        out["tail_wave_pct"] = tail_wave_pct(waves)
    sms, grid = _raw_value(raw, SM_COUNT), direct.get("grid_size")
    if sms and grid is not None:
        out["ctas_per_sm"] = grid / sms
    if waves is not None:
        idle = wave_idle_pct(waves, out.get("ctas_per_sm"))
        if idle is not None:
            out["wave_idle_pct"] = idle
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
                raw=raw,
            )
        )
        kernels[-1].metrics, kernels[-1].rejected = without_impossible(canonical_metrics(raw))
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
        k.metrics, k.rejected = without_impossible(canonical_metrics(k.raw))
    return [by_id[i] for i in sorted(by_id)]


def without_impossible(metrics: Mapping[str, float]) -> tuple[dict[str, float], dict[str, float]]:
    """`metrics` split into the values that can be true and those that cannot.

    Nsight Compute can report a hit rate above 100% (the H200 read 108-181% for the L2
    of launches of a few microseconds that end in atomics or scattered stores).  NVIDIA's
    answer on its forum ("Weird Number for L2 Cache Hitrate", 2020): a value outside
    0-100% means the metric could not be collected accurately, typically on a kernel too
    small to reach a steady state, its hits and queries counted on different replays.
    Such a value is left out, not clamped: 100% would claim a perfect hit rate.
    """
    kept: dict[str, float] = {}
    rejected: dict[str, float] = {}
    for name, value in metrics.items():
        if metric_value_problem(name, value) is None:
            kept[name] = value
        else:
            rejected[name] = value
    return kept, rejected


# Metrics that add up across the kernels of one operation; the other percentages are
# weighted by each kernel's duration, and sizes (registers, shared memory) take the max.
_SUMMED = {
    "duration_us",
    "local_memory_bytes",
    "shared_bank_conflicts",
    "global_reduction_sectors",
    "dram_bytes",
}
_MAXED = {"registers_per_thread", "shared_mem_per_block_kb"}
# Launch shape: the longest kernel's (it carries the time).
_LONGEST = {
    "grid_size",
    "block_size",
    "waves_per_sm",
    "tail_wave_pct",
    "wave_idle_pct",
    "ctas_per_sm",
    "occupancy_limit_registers",
    "occupancy_limit_shared_mem",
    "occupancy_limit_warps",
    "occupancy_limit_blocks",
}


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
        if m == "global_store_efficiency_pct":
            out[m] = _store_efficiency_of_call(kernels)
            continue
        if m in _SUMMED:
            out[m] = sum(k.metrics[m] for k in have)
        elif m in _MAXED:
            out[m] = max(k.metrics[m] for k in have)
        elif m in _LONGEST:
            if m in longest.metrics:
                out[m] = longest.metrics[m]
        elif total > 0 and all("duration_us" in k.metrics for k in have):
            weight = sum(k.metrics["duration_us"] for k in have)
            out[m] = sum(k.metrics[m] * k.metrics["duration_us"] for k in have) / max(weight, 1e-9)
        else:
            out[m] = sum(k.metrics[m] for k in have) / len(have)
    return out


def _store_efficiency_of_call(kernels: Sequence[KernelCounters]) -> float:
    """The call's global-store efficiency, by duration over the kernels whose store
    counters were read: a kernel whose stores were too few to measure (an argmax's
    values, a reduction's sums) counts as wasting nothing, so the small combine kernel
    of FlagGems' count_nonzero (25% efficient, 11% of the time on an H100) does not make
    the whole call read as strided stores."""
    weighted = weight = 0.0
    for k in kernels:
        t = k.metrics.get("duration_us", 0.0)
        if "global_store_efficiency_pct" in k.metrics:
            weighted += k.metrics["global_store_efficiency_pct"] * t
            weight += t
        elif GLOBAL_ST_SECTORS in k.raw:
            weighted += 100.0 * t
            weight += t
    if weight > 0:
        return weighted / weight
    measured = [
        k.metrics["global_store_efficiency_pct"]
        for k in kernels
        if "global_store_efficiency_pct" in k.metrics
    ]
    return sum(measured) / len(measured)


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
    target: Sequence[str],
    metrics: Sequence[str],
    *,
    ncu: str = "ncu",
    page: str = "raw",
    select: Sequence[str] = (),
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
        *select,
        *target,
    ]


def find_ncu(ncu: str | None = None) -> str | None:
    return ncu or os.environ.get("KBOPT_NCU") or shutil.which("ncu")


_QUERIED: dict[str, frozenset[str] | None] = {}
# Counter domains `ncu --query-metrics` lists; launch__ and device__ attributes it does not.
_QUERYABLE = ("smsp__", "sm__", "l1tex__", "lts__", "dram__", "gpu__")


def available_counters(exe: str, timeout_s: float = 60.0) -> frozenset[str] | None:
    """Base names of the counters this ncu offers on this GPU (None when it cannot say)."""
    if exe not in _QUERIED:
        names: frozenset[str] | None = None
        try:
            proc = subprocess.run(
                [exe, "--query-metrics"],
                capture_output=True,
                text=True,
                timeout=timeout_s,
                check=False,
            )
            found = {line.split()[0] for line in proc.stdout.splitlines() if line.strip()}
            # Trust the list only when it names counters every Hopper ncu has.
            if {"dram__bytes", "gpu__time_duration"} <= found:
                names = frozenset(found)
        except (OSError, subprocess.TimeoutExpired):
            names = None
        _QUERIED[exe] = names
    return _QUERIED[exe]


def offered(metrics: Sequence[str], counters: frozenset[str] | None) -> tuple[list[str], list[str]]:
    """(metrics to request, metrics this ncu does not offer)."""
    if counters is None:
        return list(metrics), []
    keep: list[str] = []
    drop: list[str] = []
    for m in metrics:
        base = m.split(".", 1)[0]
        (drop if m.startswith(_QUERYABLE) and base not in counters else keep).append(m)
    return keep, drop


def _save_output(command: Sequence[str], stdout: str) -> None:
    """Keep ncu's raw CSV when KBOPT_NCU_SAVE_DIR names a folder (for recorded test data)."""
    folder = os.environ.get("KBOPT_NCU_SAVE_DIR")
    if not folder:
        return
    out = Path(folder)
    out.mkdir(parents=True, exist_ok=True)
    n = len(list(out.glob("ncu-*.csv")))
    (out / f"ncu-{n:03d}.csv").write_text(stdout, encoding="utf-8")
    (out / f"ncu-{n:03d}.cmd").write_text(" ".join(command) + "\n", encoding="utf-8")


def run_ncu(
    target: Sequence[str],
    *,
    ncu: str | None = None,
    timeout_s: float = 300.0,
    env: Mapping[str, str] | None = None,
    retries: int = 3,
    cwd: Path | None = None,
    metrics: Sequence[str] | None = None,
    select: Sequence[str] = (),
) -> NcuOutcome:
    """Profile `target` (a command line); never raises for a missing or locked profiler.

    A metric this GPU does not have is dropped and the run retried (up to `retries`
    times), so one unknown counter does not cost all the others.  `select` holds ncu's
    kernel filters (`--kernel-name ...`, `--launch-count ...`).
    """
    exe = find_ncu(ncu)
    if not exe:
        return NcuOutcome([], [], unavailable="ncu is not on PATH")
    metrics = list(metrics) if metrics is not None else requested_metric_names()
    command: list[str] = []
    log = ""
    for _ in range(retries + 1):
        command = build_command(target, metrics, ncu=exe, select=select)
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
        _save_output(command, proc.stdout)
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


# ------------------------------------------------------------- bounded profiling

TIMING_METRICS = ("gpu__time_duration.sum",)
HEAVY_COVERAGE = 0.9  # profile in full the kernels that carry this share of the GPU time
HEAVY_MAX = 4  # ... but at most this many distinct kernels
FULL_PASS_MAX_LAUNCHES = 16  # and at most this many launches of them


# ncu writes a name in an anonymous namespace as `<unnamed>::x`, and its CSV export
# sometimes keeps only `unnamed>::x`: either form unbalances the template brackets (a cub
# radix-sort kernel then read as `identity_decomposer_t`, its last template argument).
_ANONYMOUS = re.compile(r"\(anonymous namespace\)::|<?unnamed>::")


def _head(name: str) -> str:
    """A demangled kernel name without anonymous namespaces and without its parameter list
    (the last top-level parenthesised group)."""
    text = _ANONYMOUS.sub("", name.strip())
    if not text.endswith(")"):
        return text
    depth = 0
    for i in range(len(text) - 1, -1, -1):
        ch = text[i]
        if ch == ")":
            depth += 1
        elif ch == "(":
            depth -= 1
            if depth == 0:
                return text[:i]
    return text


def function_name(name: str) -> str:
    """The bare function name of a (demangled) kernel name: no return type, namespaces,
    template arguments or parameters.  `void at::native::(anonymous namespace)::
    elementwise_kernel<128, 4, F>(int, F)` -> `elementwise_kernel`."""
    out, depth = [], 0
    for ch in _head(name):  # drop template arguments
        if ch == "<":
            depth += 1
        elif ch == ">":
            depth = max(0, depth - 1)
        elif depth == 0:
            out.append(ch)
    bare = "".join(out).strip()
    last = bare.split("::")[-1].split()[-1] if bare.split() else bare
    return last or name


def readable_name(name: str, width: int = 48) -> str:
    """A short display name: the function name, with the first template argument when the
    kernel is a template instance (`vectorized_elementwise_kernel<FillFunctor>`); template
    arguments are read before the parameter list, never from the parameters' types."""
    base = function_name(name)
    inner = re.search(r"<([^<>]*(?:<[^<>]*>[^<>]*)*)>", _head(name))
    if inner:
        args = [a.strip() for a in re.split(r",(?![^<]*>)", inner.group(1)) if a.strip()]
        named = [a for a in args if not re.fullmatch(r"[-\d\s(),]+u?l?", a)]
        if named:
            arg = re.sub(r"\w+::", "", re.sub(r"<.*", "", named[0])).split()
            if arg and arg[-1]:  # `void gpu_kernel_impl<...>` -> gpu_kernel_impl
                base = f"{base}<{arg[-1]}>"
    return base if len(base) <= width else base[: width - 3] + "..."


def distinct_names(names: Sequence[str]) -> list[str]:
    """`names` with a repeated one numbered from its second occurrence (`k`, `k #2`...):
    one kernel launched several times with other template arguments or shapes reads the
    same once shortened, and a profile's Stages table needs one name per row."""
    seen: dict[str, int] = {}
    out = []
    for n in names:
        seen[n] = seen.get(n, 0) + 1
        out.append(n if seen[n] == 1 else f"{n} #{seen[n]}")
    return out


def heavy_launches(
    launches: Sequence[tuple[str, float]],
    coverage: float = HEAVY_COVERAGE,
    limit: int = HEAVY_MAX,
) -> list[str]:
    """Function names of the kernels that carry `coverage` of the time (most first)."""
    per_name: dict[str, float] = {}
    for name, us in launches:
        key = function_name(name)
        per_name[key] = per_name.get(key, 0.0) + us
    total = sum(per_name.values()) or 1.0
    chosen: list[str] = []
    acc = 0.0
    for name, us in sorted(per_name.items(), key=lambda kv: -kv[1]):
        if acc >= coverage * total or len(chosen) >= limit:
            break
        chosen.append(name)
        acc += us
    return chosen


def profile_launches(
    target: Sequence[str],
    *,
    budget_s: float = 300.0,
    ncu: str | None = None,
    env: Mapping[str, str] | None = None,
    cwd: Path | None = None,
    progress: Callable[[str], None] | None = None,
) -> NcuOutcome:
    """Counters of the kernels that matter in one profiled call, within `budget_s`.

    Pass 1 times every launch of the call (one cheap counter, one replay each).  Pass 2
    reads every counter, only for the kernels that carry most of the time (`HEAVY_*`),
    through ncu's kernel-name filter.  A call of a few launches skips the filter.
    """
    say = progress or (lambda _msg: None)
    exe = find_ncu(ncu)
    if not exe:
        return NcuOutcome([], [], unavailable="ncu is not on PATH")
    deadline = time.monotonic() + budget_s
    say("ncu pass 1: GPU time of every launch of the profiled call")
    timing = run_ncu(
        target, ncu=exe, timeout_s=budget_s * 0.5, env=env, cwd=cwd, metrics=TIMING_METRICS
    )
    if not timing.available:
        return timing
    launches = [(k.name, k.metrics.get("duration_us", 0.0)) for k in timing.kernels]
    heavy = heavy_launches(launches)
    select: list[str] = []
    if len(launches) > HEAVY_MAX:
        pattern = "|".join(re.escape(n) for n in heavy)
        select = [
            "--kernel-name-base",
            "function",
            "--kernel-name",
            f"regex:^(.*::)?({pattern})$",
            "--launch-count",
            str(FULL_PASS_MAX_LAUNCHES),
        ]
    wanted, skipped = offered(requested_metric_names(), available_counters(exe))
    left = deadline - time.monotonic()
    if left < 5:
        timing.unavailable = f"the {budget_s:.0f} s profiling budget ran out after pass 1"
        return timing
    say(
        f"ncu pass 2: {len(wanted)} counters for {', '.join(heavy)} "
        f"({len(launches)} launches in the call; {left:.0f} s left)"
    )
    full = run_ncu(target, ncu=exe, timeout_s=left, env=env, cwd=cwd, metrics=wanted, select=select)
    if select and not full.kernels and time.monotonic() < deadline - 5:
        # The name filter matched nothing (a naming this ncu spells differently): read the
        # first launches of the call instead, still bounded.
        say("ncu pass 2 matched no kernel by name; profiling the first launches instead")
        full = run_ncu(
            target,
            ncu=exe,
            timeout_s=deadline - time.monotonic(),
            env=env,
            cwd=cwd,
            metrics=wanted,
            select=["--launch-count", str(FULL_PASS_MAX_LAUNCHES)],
        )
    full.launches = launches
    full.skipped_metrics = skipped
    return full
