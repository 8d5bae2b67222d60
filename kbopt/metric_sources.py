"""Where each catalog metric's value comes from: the closure between triggers and the profiler.

A trigger (`stall_long_scoreboard_pct > 30`) is only useful if `kbopt profile` can
measure its metric.  `produced_by()` answers, for every metric of the vocabulary, from
the code that produces it rather than from a hand-kept list:

* Nsight Compute metric names - the counters `kbopt.bench.ncu` requests and combines
  (`NCU_READS`, `DERIVED_READS`), plus `dram_bytes_ratio` and `arithmetic_intensity`,
  which the profiler divides by the kernel spec's minimal bytes / FLOPs;
* `timing` - the measured time per call and what it gives against the same-run
  ceilings (`pct_of_floor`; DRAM% and TC% estimates when counters are unavailable);
* `spec` - a kernel dimension the spec maps to a catalog metric (`Dim.metric`), a fixed
  metric of the spec, or a value a version records about its launch (heads per program,
  KV splits, autotune configurations);
* `cycle` - the optimization cycle's own bookkeeping (speed-up over the previous version);
* `launch` - what a Triton kernel's launch says without a profiler (grid, warps,
  registers, shared memory, and the occupancy and waves they give:
  `kbopt.bench.launch_stats`), on every real measurement.

`kbopt lint` refuses a trigger on a metric with no producer, and `kbopt vocab --json`
shows each metric's `produced_by`.
"""

from __future__ import annotations

from functools import cache
from typing import TYPE_CHECKING

from kbopt.vocab import METRICS

if TYPE_CHECKING:
    from kbopt.store import Store

TIMING = "timing"
SPEC = "spec"
CYCLE = "cycle"
LAUNCH = "launch"

# Metrics a kernel spec supplies: dimensions (`Dim.metric`), `fixed_metrics`, and the
# values versions record about their launch (`launch_info(...)["metrics"]`, copied into
# the measurement by the real backend; `splits` and `n_regs` are read by name).
SPEC_METRICS = frozenset(
    {
        "batch",
        "query_len",
        "kv_len",
        "rows",
        "row_len",
        "num_heads",
        "head_dim",
        "matmul_operand_bits",
        "attended_fraction",
        "live_program_fraction",
        "heads_per_program",
        "num_splits",
        "autotune_configs",
    }
)
TIMING_METRICS = {
    "duration_us": (TIMING,),
    "pct_of_floor": (TIMING,),
    # Without counters: minimal bytes / time against the measured copy bandwidth, and
    # matmul FLOPs / time against the measured matmul rate (lower bounds).
    "dram_throughput_pct": (TIMING,),
    "tensor_core_util_pct": (TIMING,),
}
CYCLE_METRICS = {"speedup_vs_previous": (CYCLE,)}
# Derived in kbopt.workflow.profiler.derived_metrics from counters and the spec.
PROFILE_DERIVED = {
    "dram_bytes_ratio": ("dram__bytes_read.sum", "dram__bytes_write.sum", SPEC),
    "arithmetic_intensity": ("dram__bytes_read.sum", "dram__bytes_write.sum", SPEC),
    "kernel_count": ("gpu__time_duration.sum",),
    "host_overhead_us": ("gpu__time_duration.sum", TIMING),
    "launch_overhead_pct": ("gpu__time_duration.sum", TIMING),
    "row_elements_per_thread": ("launch__block_size", SPEC),
    "elementwise_launches": ("gpu__time_duration.sum",),
    "narrow_launch_pct": ("launch__grid_size", "gpu__time_duration.sum"),
}


@cache
def produced_by() -> dict[str, tuple[str, ...]]:
    """Every vocabulary metric -> its sources (empty tuple: nothing produces it)."""
    from kbopt.bench.ncu import DERIVED_READS, NCU_READS

    sources: dict[str, list[str]] = {name: [] for name in METRICS}

    def add(metric: str, names: tuple[str, ...]) -> None:
        for n in names:
            if n not in sources[metric]:
                sources[metric].append(n)

    for read in NCU_READS:
        add(read.metric, read.ncu_names)
    for metric, names in DERIVED_READS.items():
        add(metric, names)
    for metric, names in PROFILE_DERIVED.items():
        add(metric, names)
    for metric, names in TIMING_METRICS.items():
        add(metric, names)
    for metric, names in CYCLE_METRICS.items():
        add(metric, names)
    for metric in SPEC_METRICS:
        add(metric, (SPEC,))
    from kbopt.bench.launch_stats import PRODUCED

    for metric in PRODUCED:
        add(metric, (LAUNCH,))
    return {m: tuple(v) for m, v in sources.items()}


def unproduced() -> list[str]:
    """Vocabulary metrics nothing produces (a trigger on one of them can never fire)."""
    return sorted(m for m, src in produced_by().items() if not src)


def trigger_metrics_in_catalog(store: Store | None = None) -> set[str]:
    """Every metric some entry's trigger reads, in the catalog `store` serves.

    Read from the search index's ranking table (the one `recommend` builds and caches),
    not by parsing every entry again on each profile.
    """
    from kbopt.search import get_index
    from kbopt.strategy import _table

    ix = get_index(store)
    return set(ix.reading(lambda: _table(ix)).metric_names)
