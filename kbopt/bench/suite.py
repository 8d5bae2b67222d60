"""Side-by-side benchmark of a kernel's versions and baselines: results rows on disk.

`kbopt bench KERNEL` (and `RealBackend.measure`, one version at a time) use this module:
one run measures the device's ceilings once, then per trial configuration draws input
sets (halving the spec's backoff dimension on out-of-memory), checks every version
against the reference before timing it, and times it with the shared harness.  Each
result is one JSON row:

    kernel, version, family, config, <each dim>, dims, status ("ok" | "wrong" | "error"),
    rel_err, time_us, p20_us, p80_us, gbps, tflops, pct_of_floor, floor_us, floor_bound,
    bytes, flops, copy_bw_gbps, matmul_tflops, speedup_vs_<baseline>, kernel_<what the
    launch recorded> (n_regs, splits...), device, the software versions (torch, triton,
    cuda, python...), date, command

and, on request, `time_us_repeat` (a second timing: the run-to-run spread) and, with
`graph=True`, `time_us_graph` / `pct_of_floor_graph` (each input set's call captured in a
CUDA graph and replayed under the same L2 flush and rotation: GPU time without host
overhead) and `host_us_per_call` (Python time of one call, back to back: when it exceeds
the GPU time, `time_us` measures the host, not the kernel).

written to `<kernel folder>/results/<UTC stamp>-<device>.json`; the devlog and LEARN read
those files, never numbers typed by hand.  One broken version is recorded as an error row
and never stops the matrix.
"""

from __future__ import annotations

import datetime as dt
import json
import sys
import traceback
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

from kbopt.bench.trials import TrialConfig, is_out_of_memory
from kbopt.kernel import KernelSpec, Version

Progress = Callable[[str], None]


def _stderr(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


def now() -> str:
    return dt.datetime.now(dt.UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def time_version(
    spec: KernelSpec,
    version: Version,
    dims: Mapping[str, int],
    sets: list[tuple[Any, ...]],
    ceilings: Mapping[str, float],
    rep_ms: int,
    *,
    time_wrong: bool = False,
    repeat: bool = False,
    graph: bool = False,
    cache: Any = None,
) -> dict[str, Any]:
    """Check, then time one version on prepared input sets; the measured row fields.

    A version that fails the check is not timed unless `time_wrong` (the cycle compares
    times before it looks at correctness).  `cache` (`harness.InputCache`) keeps the
    check's inputs and reference output from one call to the next at the same shape."""
    from kbopt.bench import harness, launch_stats

    recorded = spec.launch_info(version.family) if spec.launch_info is not None else {}
    if isinstance(recorded, dict):
        recorded.clear()  # what another version's launch left must not leak in
    # The check's call is also where the Triton launches are seen (grid, warps, registers,
    # shared memory), outside any timed region.
    with launch_stats.capture() as launches:
        err, problem = harness.check(spec, version, dims, spec.dtype, cache=cache)
    row: dict[str, Any] = {"rel_err": err}
    if launches:
        row["launches"] = launch_stats.summary(launches)
    if problem:
        row.update(status="wrong", error=problem)
        # a version that raised cannot be timed either: calling it again would raise again
        if not time_wrong or problem.startswith(harness.RAISED):
            return row
    time_ms, written = _timer(spec, version, dims, sets, rep_ms, cache)
    med, p20, p80 = time_ms()
    us = med * 1e3
    nbytes, nflops = spec.bytes_moved(dims), spec.flops(dims)
    floor = spec.floor_us(dims, ceilings["copy_bw_gbps"], ceilings["matmul_tflops"])
    row.update(
        time_us=round(us, 3),
        p20_us=round(p20 * 1e3, 3),
        p80_us=round(p80 * 1e3, 3),
        gbps=round(nbytes / (us * 1e-6) / 1e9, 1),
        tflops=round(nflops / (us * 1e-6) / 1e12, 2),
        pct_of_floor=round(100.0 * floor / us, 1),
    )
    row.setdefault("status", "ok")
    if written:  # timed on restored inputs (the CUDA-graph replay below is not)
        row["inputs_written"] = sorted(written)
    if isinstance(recorded, dict):
        row.update({f"kernel_{k}": v for k, v in recorded.items()})
    if repeat:
        row["time_us_repeat"] = round(time_ms()[0] * 1e3, 3)
    if graph and row["status"] == "ok":
        row["host_us_per_call"] = round(harness.host_us_per_call(version, sets[0]), 1)
        graph_us = harness.graph_ms(version, sets, rep_ms) * 1e3
        row["time_us_graph"] = round(graph_us, 3)
        row["pct_of_floor_graph"] = round(100.0 * floor / graph_us, 1)
    return row


def _timer(
    spec: KernelSpec,
    version: Version,
    dims: Mapping[str, int],
    sets: list[tuple[Any, ...]],
    rep_ms: int,
    cache: Any,
) -> tuple[Callable[[], tuple[float, float, float]], frozenset[int]]:
    """How to time `version` on `sets`, and the input positions it writes into.  One untimed
    call on the first set tells; a version that writes is timed on sets made anew and
    restored before every call (`kbopt.bench.input_writes`), since what an earlier call
    left (masked logits, a moved cache) can change how long the next one takes."""
    from kbopt.bench import harness, input_writes

    written = input_writes.written_positions(harness.launch_of(version, sets[0]), sets[0])
    if not written:
        return (lambda: harness.bench_ms(harness.rotating(version, sets), rep_ms)), written
    # Without a cache of the search's inputs, a cache for this one measurement.
    keeper = cache if cache is not None else harness.InputCache()
    fresh, pristine = keeper.restorable_sets(spec, dims, spec.dtype, written)
    launches = [harness.launch_of(version, s) for s in fresh]
    return (lambda: input_writes.bench_restoring_ms(launches, pristine, rep_ms)), written


def config_fields(
    spec: KernelSpec, config: TrialConfig, ceilings: Mapping[str, float]
) -> dict[str, Any]:
    """What every row of one configuration shares: dims, roofline, ceilings."""
    dims = config.dims_dict
    t_bw = spec.bytes_moved(dims) / (ceilings["copy_bw_gbps"] * 1e9) * 1e6
    t_mm = spec.flops(dims) / (ceilings["matmul_tflops"] * 1e12) * 1e6
    return {
        "config": config.name,
        **dims,
        "dims": dims,
        "bytes": spec.bytes_moved(dims),
        "flops": spec.flops(dims),
        "floor_us": round(max(t_bw, t_mm), 3),
        "floor_bound": "memory" if t_bw >= t_mm else "compute",
        "copy_bw_gbps": round(ceilings["copy_bw_gbps"], 1),
        "matmul_tflops": round(ceilings["matmul_tflops"], 1),
    }


def alloc_sets(
    spec: KernelSpec, config: TrialConfig, progress: Progress = _stderr
) -> tuple[TrialConfig, list[tuple[Any, ...]]]:
    """Input sets for a configuration, halving the backoff dim on out-of-memory."""
    import torch

    from kbopt.bench.harness import input_sets

    cfg = config
    while True:
        try:
            return cfg, input_sets(spec, cfg.dims_dict, spec.dtype)
        except Exception as exc:
            if not is_out_of_memory(exc):
                raise
            torch.cuda.empty_cache()
            value = cfg.dim(spec.backoff_dim) // 2
            if value < 1:
                raise
            progress(f"[bench] out of memory at {cfg.shape}; {spec.backoff_dim}={value}")
            cfg = cfg.with_dim(spec.backoff_dim, value)


def run_suite(
    spec: KernelSpec,
    versions: Mapping[str, Version],
    configs: Sequence[TrialConfig],
    *,
    rep_ms: int,
    command: str,
    repeat: bool = False,
    graph: bool = False,
    progress: Progress = _stderr,
    finished: list[dict[str, Any]] | None = None,
) -> list[dict[str, Any]]:
    """Every version at every configuration, in one process, against one set of ceilings.

    `finished`, when given, receives each configuration's rows as soon as all its versions
    are timed, so a caller stopped part-way (`kbopt bench` on SIGTERM) still holds every
    configuration that completed."""
    import torch

    from kbopt.bench.harness import measure_ceilings, software

    if not torch.cuda.is_available():
        from kbopt.errors import KbError

        raise KbError("kbopt bench needs a CUDA GPU (use --backend fake for a dry run)")
    device = torch.cuda.get_device_name(0)
    ceilings = measure_ceilings(rep_ms, spec.matmul_precision)
    progress(
        f"[bench] {device}: copy {ceilings['copy_bw_gbps']:.0f} GB/s, "
        f"{spec.matmul_precision} matmul {ceilings['matmul_tflops']:.0f} TFLOP/s"
    )
    shared = {
        "kernel": spec.name,
        "device": device,
        **software(),
        "date": now(),
        "command": command,
    }
    rows: list[dict[str, Any]] = finished if finished is not None else []
    for config in configs:
        ran, sets = alloc_sets(spec, config, progress)
        fields = config_fields(spec, ran, ceilings)
        cfg_rows = []
        for i, (name, version) in enumerate(versions.items(), 1):
            progress(f"[bench] {ran.name} ({ran.shape}) {i}/{len(versions)}: {name}")
            row = {**shared, "version": name, "family": version.family, **fields}
            try:
                row.update(
                    time_version(
                        spec,
                        version,
                        ran.dims_dict,
                        sets,
                        ceilings,
                        rep_ms,
                        repeat=repeat,
                        graph=graph,
                    )
                )
            except Exception as exc:  # one broken version must not stop the matrix
                row.update(status="error", error=f"{type(exc).__name__}: {exc}"[:500])
                traceback.print_exc()
                torch.cuda.empty_cache()
            cfg_rows.append(row)
        add_speedups(cfg_rows, spec.compare_with)
        rows.extend(cfg_rows)
        del sets
        torch.cuda.empty_cache()
    return rows


def add_speedups(rows: list[dict[str, Any]], baselines: Sequence[str]) -> None:
    """`speedup_vs_<baseline>` on every ok row of one configuration."""
    times = {r["version"]: r.get("time_us") for r in rows if r.get("status") == "ok"}
    for r in rows:
        if r.get("status") != "ok":
            continue
        for base in baselines:
            if times.get(base):
                r[f"speedup_vs_{base}"] = round(times[base] / r["time_us"], 3)


def write_rows(rows: list[dict[str, Any]], out_dir: Path, prefix: str = "") -> Path:
    """`<out_dir>/<prefix><UTC stamp>-<device>.json`, the rows with an indent of one."""
    out_dir.mkdir(parents=True, exist_ok=True)
    device = str(rows[0].get("device", "nodevice")).replace(" ", "-") if rows else "nodevice"
    stamp = dt.datetime.now(dt.UTC).strftime("%Y%m%dT%H%M%SZ")
    path = out_dir / f"{prefix}{stamp}-{device}.json"
    path.write_text(json.dumps(rows, indent=1) + "\n", encoding="utf-8")
    return path


def table(rows: list[dict[str, Any]], dim_names: Sequence[str]) -> str:
    """The rows as a short text table (config, version, time, GB/s, % of floor, speed-ups)."""
    speed_keys = sorted({k for r in rows for k in r if k.startswith("speedup_vs_")})
    graph = any("time_us_graph" in r for r in rows)
    head = f"{'config':<12}{'version':<24}{'time_us':>10}{'GB/s':>8}{'TFLOP/s':>9}{'%floor':>8}"
    head += f"{'graph_us':>10}{'%floor_g':>9}" if graph else ""
    head += "".join(f"{'x' + k[len('speedup_vs_') :]:>14}" for k in speed_keys)
    lines = [head]
    for r in rows:
        if r.get("status") != "ok":
            lines.append(
                f"{r['config']:<12}{r['version']:<24}  {r.get('status')}: {r.get('error', '')[:70]}"
            )
            continue
        line = (
            f"{r['config']:<12}{r['version']:<24}{r['time_us']:>10.1f}{r['gbps']:>8.0f}"
            f"{r['tflops']:>9.1f}{r['pct_of_floor']:>8.1f}"
        )
        if graph:
            line += (
                f"{r['time_us_graph']:>10.1f}{r['pct_of_floor_graph']:>9.1f}"
                if "time_us_graph" in r
                else f"{'-':>10}{'-':>9}"
            )
        line += "".join(f"{r[k]:>14.2f}" if k in r else f"{'-':>14}" for k in speed_keys)
        lines.append(line)
    seen = set()
    for r in rows:
        key = (r["config"], tuple(r.get(d) for d in dim_names))
        if key in seen:
            continue
        seen.add(key)
        shape = ", ".join(f"{d}={r.get(d)}" for d in dim_names)
        lines.append(
            f"floor {r['config']} ({shape}): {r['floor_us']:.1f} us ({r['floor_bound']}-bound)"
        )
    return "\n".join(lines)
