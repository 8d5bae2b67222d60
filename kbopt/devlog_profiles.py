"""Nsight Compute results rendered as profile contracts, for a devlog's `profiles` block.

A profiling session leaves three files side by side in `<kernel folder>/results/`:

- `ncu-<stamp>.csv`: ncu's `--csv --page raw` output, one row per profiled kernel launch;
- `ncu-<stamp>.launches.json`: the sidecar written by the profiled program
  (`python -m kbopt.bench.ncu_target SPEC --run ... --out`), one record per launch, in
  launch order: `version`, `config`, `dims` (older sidecars: the dims as top-level keys),
  `kernel` (the launch's label: `main`, `combine`...) and what the launch recorded
  (`splits`...);
- `ncu-<stamp>.meta.json` (optional): device, date and the ncu command, for the Source line.

ncu's rows and the sidecar's records are paired in order (a call that did not count its
launches takes the rows the others leave), grouped per (version, config), and each group
becomes one `Profile`: a Stages row per launch (named by the kernel's `devlog.toml`, else
by ncu's kernel name), the first launch's counters as Metrics, and a bottleneck with its
root cause from fixed rules on those counters (`diagnose`, first match wins):

| rule    | condition                                    | class   |
|---------|----------------------------------------------|---------|
| spills  | more than 1 MB of local-memory traffic       | latency |
| compute | tensor pipe busy >= 60%                      | compute |
| memory  | DRAM busy >= 60%                             | memory  |
| latency | anything else                                | latency |

The kernel's `devlog.toml` (`kbopt.devlog_options`) may name the stages and word the
root causes for its own kernels; the numbers always come from the CSV.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from kbopt.devlog_options import DevlogOptions
from kbopt.errors import KbError
from kbopt.kernel import KernelSpec
from kbopt.results import NCU_PREFIX, row_dims
from kbopt.vocab import Bottleneck

SPILL_BYTES = 1e6  # local-memory traffic above this is a register spill worth naming
BUSY_PCT = 60.0
# The counters of the first launch kept in a profile's Metrics table.
KEPT_METRICS = (
    "registers_per_thread",
    "shared_mem_per_block_kb",
    "local_memory_bytes",
    "l2_hit_rate_pct",
    "grid_size",
    "block_size",
    "waves_per_sm",
    "sm_throughput_pct",
    "theoretical_occupancy_pct",
)
ROOT_CAUSES = {
    "spills": (
        "The per-thread state does not fit in {regs:.0f} registers per thread, so it spills "
        "({local_mb:.0f} MB of local loads/stores); tensor cores are busy only {tc:.0f}% of "
        "the time."
    ),
    "compute": "Tensor cores are {tc:.0f}% busy: the kernel is close to its matmul bound.",
    "memory": "DRAM is {dram:.0f}% busy: the kernel is close to its bandwidth bound.",
    "latency": (
        "Neither tensor cores ({tc:.0f}%) nor DRAM ({dram:.0f}%) is saturated while only "
        "{occ:.1f}% of warp slots are occupied ({regs:.0f} regs/thread): the work of each "
        "step runs serially with little to overlap it."
    ),
}


def diagnose(m: dict[str, float], causes: dict[str, str] | None = None) -> tuple[str, str, str]:
    """(bottleneck, key issue, root cause) of one launch's counters (see module doc)."""
    values = {
        "local_mb": m.get("local_memory_bytes", 0.0) / 1e6,
        "tc": m.get("tensor_core_util_pct", 0.0),
        "dram": m.get("dram_throughput_pct", 0.0),
        "occ": m.get("achieved_occupancy_pct", 0.0),
        "regs": m.get("registers_per_thread", 0.0),
    }
    v = values
    if m.get("local_memory_bytes", 0.0) > SPILL_BYTES:
        rule, cls = "spills", Bottleneck.LATENCY
        issue = f"register spills: {v['local_mb']:.0f} MB local-memory traffic at {v['regs']:.0f} regs/thread"
    elif v["tc"] >= BUSY_PCT:
        rule, cls, issue = "compute", Bottleneck.COMPUTE, f"tensor pipe {v['tc']:.0f}% busy"
    elif v["dram"] >= BUSY_PCT:
        rule, cls, issue = "memory", Bottleneck.MEMORY, f"DRAM {v['dram']:.0f}% of peak"
    else:
        rule, cls = "latency", Bottleneck.LATENCY
        issue = f"{v['occ']:.1f}% occupancy, TC {v['tc']:.0f}%, DRAM {v['dram']:.0f}%"
    template = (causes or {}).get(rule, ROOT_CAUSES[rule])
    try:
        cause = template.format(**values)
    except (KeyError, ValueError, IndexError) as exc:
        raise KbError(
            f"devlog.toml: [root_cause] {rule} cannot be filled ({exc}); use "
            "{tc} {dram} {occ} {regs} {local_mb}"
        ) from None
    return cls.value, issue, cause


def profile_files(folder: Path) -> list[tuple[Path, Path, Path | None]]:
    """(csv, sidecar, meta or None) of every ncu session in a results folder with a sidecar."""
    out = []
    for csv_path in sorted(folder.glob(f"{NCU_PREFIX}*.csv")):
        side = csv_path.with_suffix(".launches.json")
        if not side.is_file():
            continue
        meta = csv_path.with_suffix(".meta.json")
        out.append((csv_path, side, meta if meta.is_file() else None))
    return out


def _read_json(path: Path) -> Any:
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise KbError(f"{path}: cannot read it as JSON ({exc})") from None


def expand_unknown(
    launches: list[dict[str, Any]], rows: int, csv_name: str, side_name: str
) -> list[dict[str, Any]]:
    """The sidecar's records, one per ncu row: a call that did not record how many kernels
    it launched (`"kernels": null`, e.g. plain torch) takes the rows the others leave."""
    unknown = [i for i, r in enumerate(launches) if "kernels" in r and r["kernels"] is None]
    if len(launches) == rows:
        return launches
    if len(unknown) == 1 and rows > len(launches):
        i = unknown[0]
        extra = rows - len(launches)
        base = launches[i]
        added = [{**base, "kernel": f"launch{n}", "launch": n} for n in range(1, extra + 1)]
        return launches[: i + 1] + added + launches[i + 1 :]
    why = (
        f"{len(unknown)} calls did not record how many kernels they launch"
        if len(unknown) > 1
        else "the two must come from the same profiled run"
    )
    raise KbError(f"{csv_name}: {rows} ncu rows but {len(launches)} launches in {side_name}: {why}")


def kernel_name(full: str) -> str:
    """ncu's demangled kernel name without return type, template arguments or parameters:
    `void at::<unnamed>::softmax<float, 4>(T1 *)` -> `at::softmax`."""
    out: list[str] = []
    depth = 0
    for ch in full.strip().removeprefix("void ").strip():
        if ch == "<":
            depth += 1
        elif ch == ">" and depth:
            depth -= 1
        elif depth == 0:
            if ch == "(":
                break
            out.append(ch)
    return re.sub(r"(?:::)+", "::", "".join(out)).strip(": ") or full


def _stage(name: str, metrics: dict[str, float], diag: tuple[str, str]) -> Any:
    from kbopt.contracts.profile import Stage

    return Stage(
        name=name,
        duration_us=round(metrics.get("duration_us", 0.0), 1),
        tc_pct=round(metrics.get("tensor_core_util_pct", 0.0), 1),
        dram_pct=round(metrics.get("dram_throughput_pct", 0.0), 1),
        occ_pct=round(metrics.get("achieved_occupancy_pct", 0.0), 1),
        bottleneck=diag[0].capitalize(),
        key_issue=diag[1],
    )


def session_profiles(
    spec: KernelSpec, csv_path: Path, side: Path, options: DevlogOptions
) -> list[Any]:
    """The profiles of one ncu session (one per version and configuration profiled)."""
    from kbopt.bench.ncu import NcuParseError, parse_csv
    from kbopt.contracts.profile import Profile

    launches = _read_json(side)
    if not isinstance(launches, list):
        raise KbError(f"{side}: a launches sidecar is a JSON list of launch records")
    try:
        kernels = parse_csv(csv_path.read_text(encoding="utf-8"))
    except NcuParseError as exc:
        raise KbError(f"{csv_path}: {exc}") from None
    launches = expand_unknown(launches, len(kernels), csv_path.name, side.name)
    groups: dict[tuple[str, str], list[tuple[dict[str, Any], Any]]] = {}
    for launch, k in zip(launches, kernels, strict=True):
        groups.setdefault((launch["version"], launch["config"]), []).append((launch, k))
    out = []
    for (version, _config), items in groups.items():
        first, main = items[0]
        bottleneck, issue, cause = diagnose(main.metrics, options.root_cause)
        stages = []
        for i, (launch, k) in enumerate(items):
            label = str(launch.get("kernel", "main" if i == 0 else f"launch{i}"))
            # A call that did not count its launches (a baseline) has no meaningful labels:
            # the kernel's stage settings are not applied to it.
            counted = launch.get("kernels", 0) is not None
            opts = options.stages.get(label) if counted else None
            diag = (bottleneck, issue) if i == 0 else diagnose(k.metrics, options.root_cause)[:2]
            if opts is not None and opts.bottleneck is not None:
                diag = (opts.bottleneck.value, diag[1])
            if opts is not None and opts.key_issue is not None:
                try:
                    diag = (diag[0], opts.key_issue.format(**launch))
                except (KeyError, ValueError, IndexError) as exc:
                    raise KbError(
                        f"devlog.toml: [stages.{label}] key_issue names {exc}, which the "
                        f"launch records of {side.name} do not have"
                    ) from None
            name = opts.name if opts is not None and opts.name else kernel_name(k.name) or label
            stages.append(_stage(name, k.metrics, diag))
        m = main.metrics
        out.append(
            Profile(
                kernel=spec.name,
                version=version,
                config={k: float(v) for k, v in row_dims(first, spec.dim_names).items()},
                stages=stages,
                measured={k: round(m[k], 3) for k in KEPT_METRICS if k in m},
                bottleneck=Bottleneck(bottleneck),
                root_cause=cause,
            )
        )
    return out


def profiles_block(spec: KernelSpec, folder: Path, rel: str, options: DevlogOptions) -> str:
    """Every ncu session's profiles, each session closed by its Source line, then the
    profiles `kbopt profile --json` saved in the results folder."""
    out = []
    for csv_path, side, meta_path in profile_files(folder):
        out += [p.render() for p in session_profiles(spec, csv_path, side, options)]
        src = f"Source: `{rel}/{csv_path.name}`"
        if meta_path is not None:
            meta = _read_json(meta_path)
            src += (
                f", {meta.get('device', '')}, {meta.get('date', '')}; "
                f"command: `{meta.get('command', '')}`"
            )
        out.append(src + "\n")
    out += _recorded_profiles(folder, rel)
    return "\n".join(out) if out else "_No ncu profiles yet._\n"


def _recorded_profiles(folder: Path, rel: str) -> list[str]:
    """Profiles saved from `kbopt profile --json` (`profiles-*.json`: one run or a list),
    as the profiler wrote them (links made to work from the devlog), each followed by its
    Source line."""
    from kbopt.devlog import links_from_devlog

    out: list[str] = []
    for path in sorted(folder.glob("profiles-*.json")):
        data = _read_json(path)
        runs = data if isinstance(data, list) else [data]
        for run in runs:
            if not isinstance(run, dict) or "profile" not in run:
                continue
            m = run.get("measurement", {})
            out.append(links_from_devlog(str(run["profile"]).strip()) + "\n")
            out.append(
                f"Source: `{rel}/{path.name}`, {m.get('device', '')}, {m.get('date', '')}; "
                f"command: `{m.get('command', '')}`\n"
            )
    return out
