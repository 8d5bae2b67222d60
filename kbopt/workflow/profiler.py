"""PROFILE: time a version, read counters when ncu can, classify, emit the Profile contract.

`profile_version` is what `kbopt profile` and the cycle's PROFILE / VERIFY steps call:

1. time the version at the configuration (OOM backoff on the spec's backoff dimension)
   and check its output;
2. read hardware counters through ncu (`counters="auto"`: when it can; `"off"`: never;
   `"require"`: fail without them).  Without counters the Stages row holds timing
   estimates (minimal bytes / time against the measured copy bandwidth, matmul FLOPs /
   time against the measured matmul rate) and a `### Counters` note says so and why;
3. classify the bottleneck with `kbopt.bench.classify` (rules M1 / C1 / L1);
4. fill Top 3 Opportunities from `kbopt.strategy.recommend` (shared + chosen language);
5. add `### vs Baseline` rows when a previous measurement is given.

`update_devlog` writes the profile into the performance block of `docs/kernels/<kernel>.md`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from kbopt.bench.backend import (
    FAKE_DEVICE_NAME,
    Measurement,
    MeasurementBackend,
    measure_with_backoff,
)
from kbopt.bench.classify import Classification, classify
from kbopt.bench.ncu import NcuOutcome, aggregate, distinct_names, readable_name
from kbopt.bench.trials import TrialConfig
from kbopt.contracts.profile import BaselineRow, Profile, Stage, fmt_number
from kbopt.contracts.reports import pct_change
from kbopt.devlog import Devlog
from kbopt.errors import KbError
from kbopt.kernel import KernelSpec
from kbopt.ranking import (
    MISSING_LEAD,
    MISSING_NOTE,
    elementwise_launches,
    row_elements_per_thread,
)
from kbopt.store import Store
from kbopt.strategy import CONTEXT_NOTE
from kbopt.vocab import METRICS, metric_value_problem

COUNTER_MODES = ("auto", "off", "require")
# The cycle also accepts "baseline": counters for the baseline profile, timing for VERIFY
# (each ncu run costs a process start and many kernel replays on a budgeted machine).
CYCLE_COUNTER_MODES = (*COUNTER_MODES, "baseline")
FAKE_SOURCE = "fake backend: stand-in figures, not measured"
# Stage columns already carry these; the `### Metrics` table holds the rest.
_STAGE_KEYS = {"tensor_core_util_pct", "dram_throughput_pct", "achieved_occupancy_pct"}


@dataclass
class ProfileRun:
    profile: Profile
    measurement: Measurement
    classification: Classification
    counters: NcuOutcome | None
    counters_note: str
    warnings: list[str] = field(default_factory=list)  # anti-patterns that match

    @property
    def from_counters(self) -> bool:
        return self.classification.from_counters

    def devlog_header(self) -> str:
        m = self.measurement
        source = (
            "Nsight Compute counters"
            if self.from_counters
            else f"timing-only estimates ({self.counters_note})"
        )
        return (
            f"_Profiled {m.date} on {m.device or 'unknown device'} with "
            f"`{m.command}`; percentages from {source}._"
        )

    def as_dict(self) -> dict[str, Any]:
        return {
            "profile": self.profile.render(),
            "metrics": self.profile.metrics,
            "bottleneck": self.classification.bottleneck.value,
            "rule": self.classification.rule,
            "from_counters": self.from_counters,
            "counters_note": self.counters_note,
            "measurement": self.measurement.as_dict(),
            "kernels": [
                {"name": k.name, "short_name": readable_name(k.name), "metrics": k.metrics}
                for k in (self.counters.kernels if self.counters else [])
            ],
            "launches": [
                {"name": name, "short_name": readable_name(name), "duration_us": us}
                for name, us in (self.counters.launches if self.counters else [])
            ],
            "skipped_counters": list(self.counters.skipped_metrics if self.counters else []),
            "findings": [
                {"rule": f.rule, "finding": f.sentence} for f in self.classification.findings
            ],
            "warnings": self.warnings,
        }


def _stage(name: str, metrics: dict[str, float], c: Classification) -> Stage:
    return Stage(
        name=name,
        duration_us=_round(metrics.get("duration_us")),
        tc_pct=_round(metrics.get("tensor_core_util_pct")),
        dram_pct=_round(metrics.get("dram_throughput_pct")),
        occ_pct=_round(metrics.get("achieved_occupancy_pct")),
        bottleneck=c.bottleneck.value.capitalize(),
        key_issue=c.key_issue,
    )


def _round(v: float | None) -> float | None:
    return None if v is None else round(float(v), 3)


def _with_ctas_per_sm(metrics: dict[str, float], sm_count: int | None) -> dict[str, float]:
    """`metrics` with ctas_per_sm from the measured SM count when ncu's CSV lacked it."""
    if sm_count and "grid_size" in metrics and "ctas_per_sm" not in metrics:
        metrics["ctas_per_sm"] = metrics["grid_size"] / sm_count
    return metrics


def _kernel_stages(counters: NcuOutcome, sm_count: int | None) -> list[Stage]:
    """One row per fully profiled kernel launch, longest first, with readable names."""
    rows = []
    for k in counters.kernels:
        km = _with_ctas_per_sm(dict(k.metrics), sm_count)
        rows.append((km.get("duration_us", 0.0), readable_name(k.name), km))
    rows.sort(key=lambda r: -r[0])
    names = distinct_names([name for _, name, _ in rows])
    return [
        _stage(name, km, classify(km, from_counters=True))
        for name, (_, _, km) in zip(names, rows, strict=True)
    ]


def _other_row(counters: NcuOutcome) -> Stage | None:
    """The launches of the call that were timed but not profiled in full, folded."""
    if not counters.launches:
        return None
    profiled = sum(k.metrics.get("duration_us", 0.0) for k in counters.kernels)
    total = sum(us for _, us in counters.launches)
    others = len(counters.launches) - len(counters.kernels)
    if others <= 0:
        return None
    rest = max(0.0, total - profiled)
    return Stage(
        name=f"other {others} launches",
        duration_us=round(rest, 3),
        key_issue="timed only",
    )


def derived_metrics(
    spec: KernelSpec | None,
    measurement: Measurement,
    counters: NcuOutcome | None,
    merged: dict[str, float],
) -> dict[str, float]:
    """Metrics that need the kernel spec or the timing as well as the counters.

    * `dram_bytes_ratio` = DRAM bytes read and written (counters) / the spec's minimal
      bytes for these dims: above 1 the kernel re-reads data (or spills);
    * `arithmetic_intensity` = the spec's FLOPs / DRAM bytes (counters), else / the spec's
      minimal bytes;
    * `kernel_count`, `host_overhead_us`, `launch_overhead_pct`: launches of one call and
      the share of the measured time per call (CUDA events around the call) that the GPU
      time of those launches (ncu's timing pass) does not cover: launch latency, gaps
      between kernels, host work inside the call;
    * `elementwise_launches`: the call's launches of torch's element-wise kernels (a
      zero-fill before atomics, a cast after them): passes and launches a fusion removes;
    * `narrow_launch_pct`: the share of the call's GPU time in launches whose grid covers
      under a quarter of the SMs, beside a launch that fills them (see `narrow_launch_pct`);
    * `row_elements_per_thread` = the spec's row length / threads per CTA: at a few
      elements per thread a row-wise program spends its time exchanging them between
      threads (a 128-wide row sorted by 128 threads), not loading them.
    """
    out: dict[str, float] = {}
    dims = measurement.config.dims_dict
    minimal = spec.bytes_moved(dims) if spec is not None else 0.0
    flops = spec.flops(dims) if spec is not None else 0.0
    dram = merged.get("dram_bytes")
    if dram is not None and minimal > 0:
        out["dram_bytes_ratio"] = dram / minimal
    if flops > 0:
        denom = dram if dram else minimal
        if denom:
            out["arithmetic_intensity"] = flops / denom
    per_thread = row_elements_per_thread(merged)
    if per_thread is not None:
        out["row_elements_per_thread"] = per_thread
    if counters is not None and counters.available:
        launches = counters.launches or [
            (k.name, k.metrics.get("duration_us", 0.0)) for k in counters.kernels
        ]
        gpu_us = sum(us for _, us in launches)
        out["kernel_count"] = float(len(launches))
        out["elementwise_launches"] = float(elementwise_launches(name for name, _ in launches))
        grids = {
            k.name: k.metrics["grid_size"] for k in counters.kernels if "grid_size" in k.metrics
        }
        narrow = narrow_launch_pct(launches, grids, measurement.sm_count)
        if narrow is not None:
            out["narrow_launch_pct"] = narrow
        wall = measurement.duration_us
        if wall > 0 and gpu_us > 0:
            gap = max(0.0, wall - gpu_us)
            out["host_overhead_us"] = gap
            out["launch_overhead_pct"] = 100.0 * gap / wall
    return out


# A launch is narrow when its grid covers under this share of the SMs, wide when it gives
# every SM at least one CTA.
NARROW_GRID_SHARE = 0.25


def narrow_launch_pct(
    launches: list[tuple[str, float]], grids: dict[str, float], sm_count: int | None
) -> float | None:
    """Share (%) of the call's GPU time spent in narrow launches beside a wide one.

    A call whose wide launch is followed by a launch of one or a few CTAs is the shape of a
    reduction finished in a second pass: a split reduction's partials added up, split-K or
    split-KV partials merged, a second scan level.  That second launch idles most of the GPU
    for its whole duration, and folding its work into the wide launch (the last CTA to
    finish merges) removes it.  None when the grids or the SM count are unknown; 0 when the
    call has no such pair of launches.
    """
    if not sm_count or not launches:
        return None
    known = [(grids[name], us) for name, us in launches if name in grids]
    if not known:
        return None
    total = sum(us for _, us in launches)
    if total <= 0:
        return None
    if not any(grid >= sm_count for grid, _ in known):
        return 0.0
    narrow = sum(us for grid, us in known if grid < NARROW_GRID_SHARE * sm_count)
    return 100.0 * narrow / total


IMPOSSIBLE_NOTE = "Counters left out"


def _impossible_values(counters: NcuOutcome | None, measured: dict[str, float]) -> list[str]:
    """What ncu reported outside a metric's possible range, per kernel, and any derived
    value of `measured` out of range (removed from it), as readable problems."""
    problems = []
    for kernel in counters.kernels if counters is not None else []:
        for metric, value in sorted(kernel.rejected.items()):
            problem = metric_value_problem(metric, value)
            problems.append(f"{problem} in {readable_name(kernel.name)}")
    for metric in sorted(measured):
        problem = metric_value_problem(metric, measured[metric])
        if problem is not None:
            del measured[metric]
            problems.append(problem)
    return problems


def missing_trigger_metrics(measured: dict[str, float], store: Store | None = None) -> list[str]:
    """Metrics some catalog trigger reads that this profile could not measure."""
    from kbopt.metric_sources import CYCLE, SPEC, produced_by, trigger_metrics_in_catalog

    # Spec and cycle values are not measurements: a norm has no kv_len to miss.
    sources = produced_by()
    return sorted(
        m
        for m in trigger_metrics_in_catalog(store)
        if m not in measured and not set(sources[m]) <= {SPEC, CYCLE}
    )


def build_profile(
    measurement: Measurement,
    counters: NcuOutcome | None,
    counters_note: str,
    spec: KernelSpec | None = None,
    store: Store | None = None,
) -> tuple[Profile, Classification]:
    """The contract for one measurement (and its counters, when available)."""
    timing = measurement.all_metrics()
    # The fake backend's figures are stand-ins: the root cause says so rather than
    # calling them measured or estimated.
    fake = FAKE_SOURCE if measurement.device == FAKE_DEVICE_NAME else None
    stages: list[Stage] = []
    if counters is not None and counters.available:
        per_kernel = counters.kernels
        total = _with_ctas_per_sm(aggregate(per_kernel), measurement.sm_count)
        stages = _kernel_stages(counters, measurement.sm_count)
        other = _other_row(counters)
        merged = {**timing, **{k: v for k, v in total.items() if k != "duration_us"}}
        merged.update(derived_metrics(spec, measurement, counters, merged))
        cls = classify(merged, from_counters=True, source=fake)
        if other is not None:
            stages.append(other)
        if len(stages) > 1:
            stages.append(_stage("total", {**total, "duration_us": measurement.duration_us}, cls))
    else:
        merged = dict(timing)
        merged.update(derived_metrics(spec, measurement, None, merged))
        cls = classify(merged, from_counters=False, source=fake)
        stages.append(_stage("total", merged, cls))
    # The catalog metrics the kernel's dimensions stand for (from the spec) are written out
    # here, so that the profile's triggers read them without knowing the kernel.
    measured = {
        k: round(float(v), 3) for k, v in merged.items() if k in METRICS and k not in _STAGE_KEYS
    }
    impossible = _impossible_values(counters, measured)
    notes = {}
    if spec is not None and spec.contexts:
        notes[CONTEXT_NOTE] = ", ".join(spec.contexts)
    if counters_note:
        notes["Counters"] = counters_note
    if impossible:
        notes[IMPOSSIBLE_NOTE] = (
            "; ".join(impossible)
            + ". Left out: a value no measurement can take means the counter was not "
            "collected accurately (a launch too short to reach a steady state)."
        )
    if counters is not None and counters.launches:
        gpu = sum(us for _, us in counters.launches)
        host = merged.get("host_overhead_us")
        notes["Launches"] = (
            f"{len(counters.launches)} kernel launches per call, {gpu:.1f} us of GPU time in "
            f"{measurement.duration_us:.1f} us per call"
            + (f"; host-side launch and set-up: {host:.1f} us" if host is not None else "")
            + "."
        )
    if len(cls.findings) > 1:
        notes["Findings"] = "\n".join(f"- {f.rule}: {f.sentence}" for f in cls.findings)
    missing = missing_trigger_metrics(
        {**measured, **{k: v for k, v in merged.items() if k in _STAGE_KEYS}}, store
    )
    if missing:
        notes[MISSING_NOTE] = f"{MISSING_LEAD} " + ", ".join(missing) + "."
    profile = Profile(
        kernel=measurement.kernel,
        version=measurement.version,
        config=dict(measurement.config.dims),
        stages=stages,
        measured=dict(sorted(measured.items())),
        bottleneck=cls.bottleneck,
        root_cause=cls.root_cause,
        notes=notes,
    )
    return profile, cls


def baseline_rows(previous: Measurement, current: Measurement) -> list[BaselineRow]:
    rows = [
        BaselineRow(
            metric="duration_us",
            previous=fmt_number(round(previous.duration_us, 3)),
            current=fmt_number(round(current.duration_us, 3)),
            change=pct_change(previous.duration_us, current.duration_us),
        )
    ]
    a, b = previous.pct_of_floor, current.pct_of_floor
    if a is not None and b is not None:
        rows.append(
            BaselineRow(
                metric="pct_of_floor",
                previous=fmt_number(round(a, 1)),
                current=fmt_number(round(b, 1)),
                change=f"{b - a:+.1f} points",
            )
        )
    return rows


def read_counters(
    backend: MeasurementBackend, spec: KernelSpec, version: str, config: TrialConfig, mode: str
) -> tuple[NcuOutcome | None, str]:
    if mode == "skip":
        return None, (
            "counters read for the baseline profile only (--counters baseline); DRAM% and TC% "
            "are timing estimates (lower bounds), Occ% unknown"
        )
    if mode not in COUNTER_MODES:
        raise KbError(f"--counters must be one of {', '.join(COUNTER_MODES)}")
    if mode == "off":
        return None, "counters not requested (--counters off); percentages are timing estimates"
    outcome = backend.counters(spec, version, config)
    if outcome.available:
        return outcome, ""
    if mode == "require":
        raise KbError(f"hardware counters unavailable: {outcome.unavailable}")
    return outcome, (
        f"hardware counters unavailable ({outcome.unavailable}); DRAM% and TC% are timing "
        "estimates (lower bounds), Occ% unknown"
    )


def profile_version(
    backend: MeasurementBackend,
    spec: KernelSpec,
    version: str,
    config: TrialConfig,
    *,
    counters: str = "auto",
    language: str | None = None,
    previous: Measurement | None = None,
    store: Store | None = None,
    recommend_top: bool = True,
    measurement: Measurement | None = None,
) -> ProfileRun:
    """Measure (unless given), read counters, classify, rank opportunities (see module doc)."""
    m = measurement or measure_with_backoff(backend, spec, version, config)
    outcome, note = read_counters(backend, spec, version, m.config, counters)
    if m.note:
        note = "; ".join(x for x in (note, m.note) if x)
    profile, cls = build_profile(m, outcome, note, spec, store)
    if previous is not None:
        profile.baseline = baseline_rows(previous, m)
    warnings: list[str] = []
    if recommend_top:
        from kbopt.strategy import recommend

        strategy = recommend(profile, language=language, store=store)
        profile = strategy.filled_profile()
        warnings = [f"{w.id} ({w.path})" for w in strategy.warnings]
    return ProfileRun(profile, m, cls, outcome, note, warnings)


def update_devlog(root: Path, run: ProfileRun) -> Path:
    """Write the profile into docs/kernels/<kernel>.md's performance block (creating it)."""
    devlog = Devlog.for_kernel(root, run.profile.kernel)
    devlog.set_performance_profile(run.profile, run.devlog_header())
    return devlog.save()
