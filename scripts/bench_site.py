"""Measure full and incremental site builds; write results/site/build_times.{json,md}.

Two catalogs: the bundled one (docs/knowledge/) and N synthetic entries (default
1,000) generated from a fixed seed.  Each runs in a temporary copy of the project's
site sources (conf.py + docs/), never in the repository itself:

- full: `build_site(..., incremental=False)`: fresh Sphinx environment, generated
  sources and output removed first;
- incremental, nothing changed;
- incremental after adding one entry through the store (`Store.add_optimization`,
  which is not timed; only the rebuild is).

Usage:  .venv/bin/python scripts/bench_site.py [--synthetic 1000] [--repeats 3]
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import platform
import random
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from kbopt.model import (  # noqa: E402
    Entry,
    EvidenceBlock,
    EvidenceRow,
    Interaction,
    MetricEffect,
    Trigger,
)
from kbopt.site.build import BuildReport, build_site  # noqa: E402
from kbopt.site.generate import GENERATED_DIR  # noqa: E402
from kbopt.store import Store, atomic_write  # noqa: E402
from kbopt.template import render_entry  # noqa: E402
from kbopt.vocab import (  # noqa: E402
    CONTEXTS,
    METRICS,
    Bottleneck,
    Kind,
    Language,
    Level,
    Relation,
    SourceType,
    Status,
)

WORDS = [
    "tile",
    "warp",
    "shared",
    "memory",
    "register",
    "pipeline",
    "stage",
    "split",
    "reduction",
    "bandwidth",
    "latency",
    "occupancy",
    "vectorized",
    "coalesced",
    "swizzle",
    "barrier",
    "prefetch",
    "accumulator",
    "softmax",
    "decode",
    "persistent",
    "schedule",
    "launch",
    "fusion",
    "epilogue",
    "prologue",
    "cache",
    "resident",
    "bank",
    "conflict",
    "throughput",
    "tensor",
    "core",
    "layout",
    "stride",
    "head",
    "group",
    "block",
    "grid",
    "wave",
    "tail",
    "combine",
]


def copy_site_sources(dest: Path, with_knowledge: bool) -> Path:
    dest.mkdir(parents=True)
    shutil.copy2(REPO / "conf.py", dest / "conf.py")
    skip = {GENERATED_DIR} if with_knowledge else {GENERATED_DIR, "knowledge"}
    shutil.copytree(
        REPO / "docs",
        dest / "docs",
        ignore=lambda folder, names: list(skip) if Path(folder) == REPO / "docs" else [],
    )
    (dest / "docs" / "knowledge").mkdir(exist_ok=True)
    # Pages may include files from outside docs/ (results tables, kernel results).
    for folder in ("results", "kernels"):
        if (REPO / folder).is_dir():
            shutil.copytree(
                REPO / folder,
                dest / folder,
                ignore=shutil.ignore_patterns("__pycache__", "third_party", "*.pyc"),
            )
    return dest


def synthetic_entry(i: int, rng: random.Random, earlier: list[str]) -> Entry:
    today = dt.date(2026, 12, 2)
    kind = Kind.ANTI_PATTERN if rng.random() < 0.2 else Kind.OPTIMIZATION
    language = rng.choice([None, None, *Language])
    metrics = rng.sample(sorted(METRICS), 3)
    sentence = lambda n: " ".join(rng.choice(WORDS) for _ in range(n)).capitalize() + "."  # noqa: E731
    rows = [
        EvidenceRow(
            config=f"b={2**k}, t=4096",
            before=f"{rng.uniform(20, 200):.1f} us",
            after=f"{rng.uniform(10, 150):.1f} us",
            change=f"{rng.uniform(-60, 30):+.1f}%",
        )
        for k in range(rng.randint(1, 3))
    ]
    return Entry(
        name=f"synthetic-{i:04d}",
        kind=kind,
        language=language,
        title=f"Synthetic entry {i}: {rng.choice(WORDS)} {rng.choice(WORDS)}",
        applies_to=rng.sample(sorted(CONTEXTS), 2),
        bottlenecks=rng.sample(list(Bottleneck), rng.randint(1, 2)),
        impact=rng.choice(list(Level)),
        expected_gain_pct=rng.randint(1, 60),
        risk=rng.choice(list(Level)),
        status=rng.choice(list(Status)),
        created=today,
        updated=today,
        contexts=[sentence(12)],
        triggers=[Trigger.parse(f"{metrics[0]} > {rng.randint(1, 90)}")],
        mechanism=" ".join(sentence(15) for _ in range(4)),
        affected_metrics=[MetricEffect(metric=m, note=sentence(5)) for m in metrics[1:]],
        implementation=f"x_{i} = tl.load(ptr + offs, mask=mask)",
        evidence=[
            EvidenceBlock(
                source_type=SourceType.EXTERNAL_REPORT,
                source=f"Synthetic benchmark report {i} (generated for the build benchmark)",
                rows=rows,
            )
        ],
        generalization=sentence(20),
        pitfalls=[sentence(10)],
        interactions=[
            Interaction(relation=rng.choice(list(Relation)), target=t, note=sentence(4))
            for t in rng.sample(earlier, min(len(earlier), rng.randint(0, 2)))
        ],
    )


def write_synthetic(root: Path, n: int, seed: int) -> None:
    rng = random.Random(seed)
    store = Store(root)
    names: list[str] = []
    for i in range(n):
        entry = synthetic_entry(i, rng, names)
        atomic_write(store.path_for(entry), render_entry(entry))
        names.append(entry.name)


def probe_entry(target: str) -> Entry:
    today = dt.date(2026, 12, 2)
    return Entry(
        name="bench-added-entry",
        kind=Kind.OPTIMIZATION,
        title="Entry added by the build benchmark",
        applies_to=["attention-decode"],
        bottlenecks=[Bottleneck.MEMORY],
        impact=Level.MEDIUM,
        expected_gain_pct=10,
        risk=Level.LOW,
        created=today,
        updated=today,
        contexts=["Added between two builds to time the incremental rebuild."],
        triggers=[Trigger.parse("ctas_per_sm < 1")],
        mechanism="Exists to be timed.",
        affected_metrics=[MetricEffect(metric="dram_throughput_pct", note="rises")],
        evidence=[
            EvidenceBlock(
                source_type=SourceType.EXTERNAL_REPORT,
                source="none: a benchmark probe",
                rows=[EvidenceRow(config="b=1", before="10 us", after="9 us", change="-10%")],
            )
        ],
        interactions=[Interaction(relation=Relation.COMPOSES, target=target)],
    )


WARNING_LINES: list[int] = []


def timed_build(root: Path, out: Path, incremental: bool, jobs: int) -> tuple[BuildReport, float]:
    """One build and the CPU seconds this process spent on it.

    On a shared machine wall time depends on the other load; with jobs=1 the whole
    build runs in this process, so its CPU time is the steadier number.
    """
    cpu = time.process_time()
    # Not strict: a teammate's half-written module must not stop a timing run; the
    # warnings are counted in the results instead (the tests build strictly).
    report = build_site(root, out, incremental=incremental, jobs=jobs)
    WARNING_LINES.append(len(report.warnings))
    return report, time.process_time() - cpu


def measure(root: Path, repeats: int, jobs: int) -> dict[str, object]:
    out = root / "_build" / "html"
    full_runs, full_cpu = [], []
    for _ in range(repeats):
        report, cpu = timed_build(root, out, False, jobs)
        full_runs.append(report.seconds)
        full_cpu.append(cpu)
        print(
            f"  full: {report.seconds:.2f} s ({cpu:.2f} s CPU), {len(report.docs_read)} pages",
            flush=True,
        )
    entries = report.entries
    pages = len(report.docs_read)
    noop_runs, noop_cpu = [], []
    for _ in range(repeats):
        inc, cpu = timed_build(root, out, True, jobs)
        noop_runs.append(inc.seconds)
        noop_cpu.append(cpu)
        print(f"  incremental, no change: {inc.seconds:.2f} s ({cpu:.2f} s CPU)", flush=True)
    store = Store(root)
    target = sorted(e.name for e in store.entries())[0]
    add_runs, add_cpu, add_read = [], [], 0
    for k in range(repeats):
        probe = probe_entry(target).model_copy(update={"name": f"bench-added-entry-{k}"})
        store.add_optimization(probe)
        inc, cpu = timed_build(root, out, True, jobs)
        add_runs.append(inc.seconds)
        add_cpu.append(cpu)
        add_read = len(inc.docs_read)
        print(
            f"  incremental, one entry added: {inc.seconds:.2f} s ({cpu:.2f} s CPU), "
            f"{add_read} pages",
            flush=True,
        )
    return {
        "entries": entries,
        "pages": pages,
        "jobs": jobs,
        "full_s": _stats(full_runs),
        "full_cpu_s": _stats(full_cpu),
        "incremental_nochange_s": _stats(noop_runs),
        "incremental_nochange_cpu_s": _stats(noop_cpu),
        "incremental_add_entry_s": _stats(add_runs),
        "incremental_add_entry_cpu_s": _stats(add_cpu),
        "incremental_add_entry_pages_read": add_read,
    }


def _stats(runs: list[float]) -> dict[str, object]:
    return {
        "median": round(statistics.median(runs), 3),
        "min": round(min(runs), 3),
        "max": round(max(runs), 3),
        "runs": [round(r, 3) for r in runs],
    }


def machine() -> dict[str, object]:
    cpu = platform.processor() or ""
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    return {
        "cpu": cpu,
        "cores": os.cpu_count(),
        "platform": platform.platform(),
        "python": platform.python_version(),
    }


def versions() -> dict[str, str]:
    from importlib.metadata import version

    return {
        p: version(p)
        for p in ("kbopt", "sphinx", "myst-parser", "docutils", "furo", "sphinx-copybutton")
    }


def render_markdown(doc: dict) -> str:  # type: ignore[type-arg]
    lines = [
        "# Site build times",
        "",
        f"Written by `{doc['command']}` on {doc['date']}; do not edit by hand.",
        "",
        f"Machine: {doc['machine']['cpu']}, {doc['machine']['cores']} cores, "
        f"{doc['machine']['platform']}, Python {doc['machine']['python']}; "
        f"Sphinx jobs: {doc['jobs']}.",
        "Versions: " + ", ".join(f"{k} {v}" for k, v in doc["versions"].items()) + ".",
        "",
        "Each cell: median wall seconds (median CPU seconds of the build process).",
        "",
        "| catalog | entries | pages | full | incremental, no change | "
        "incremental, +1 entry | pages re-read after +1 |",
        "|---|---|---|---|---|---|---|",
    ]
    for name, r in doc["results"].items():
        cells = [
            f"{r[k + '_s']['median']} ({r[k + '_cpu_s']['median']})"
            for k in ("full", "incremental_nochange", "incremental_add_entry")
        ]
        lines.append(
            f"| {name} | {r['entries']} | {r['pages']} | {' | '.join(cells)} | "
            f"{r['incremental_add_entry_pages_read']} |"
        )
    lines += [
        "",
        f"Medians of {doc['repeats']['bundled']} (bundled) and {doc['repeats']['synthetic']} "
        "(synthetic) runs; min/max and the load average in build_times.json.  Full: fresh "
        "Sphinx environment, generated sources, doctrees and output removed.  +1 entry: one entry "
        "added through `Store.add_optimization` between builds (the write is not timed).  "
        f"Load average (1, 5, 15 min) at start {doc['load_average_1_5_15_at_start']}, at end "
        f"{doc['load_average_1_5_15_at_end']} on {doc['machine']['cores']} cores: wall times "
        "above the CPU times mean the machine was shared.  Builds are not strict here; the "
        f"most warning lines any build printed: {doc['max_warning_lines_per_build']}.",
    ]
    return "\n".join(lines) + "\n"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--synthetic", type=int, default=1000, help="synthetic entries")
    parser.add_argument("--repeats", type=int, default=3, help="runs per bundled measurement")
    parser.add_argument(
        "--synthetic-repeats", type=int, default=2, help="runs per synthetic measurement"
    )
    parser.add_argument("--jobs", type=int, default=1, help="Sphinx parallel jobs")
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--out", type=Path, default=REPO / "results" / "site")
    args = parser.parse_args()
    # Measure the catalog in the scratch folder alone, without the entries bundled with kbopt.
    os.environ["KBOPT_BUNDLED"] = "0"

    load_at_start = [round(x, 2) for x in os.getloadavg()]
    results: dict[str, object] = {}
    with tempfile.TemporaryDirectory(prefix="kbopt-bench-site-") as tmp:
        print("bundled catalog", flush=True)
        bundled = copy_site_sources(Path(tmp) / "bundled", with_knowledge=True)
        results["bundled"] = measure(bundled, args.repeats, args.jobs)
        if args.synthetic:
            print(f"{args.synthetic} synthetic entries", flush=True)
            synth = copy_site_sources(Path(tmp) / "synthetic", with_knowledge=False)
            write_synthetic(synth, args.synthetic, args.seed)
            results[f"synthetic-{args.synthetic}"] = measure(
                synth, args.synthetic_repeats, args.jobs
            )
    doc = {
        "date": dt.datetime.now(dt.UTC).isoformat(timespec="seconds"),
        "command": "python scripts/bench_site.py " + " ".join(sys.argv[1:]),
        "machine": machine(),
        "versions": versions(),
        "repeats": {"bundled": args.repeats, "synthetic": args.synthetic_repeats},
        # The machine may be shared (other builds, tests): the load says how much.
        "load_average_1_5_15_at_start": load_at_start,
        "load_average_1_5_15_at_end": [round(x, 2) for x in os.getloadavg()],
        "max_warning_lines_per_build": max(WARNING_LINES, default=0),
        "seed": args.seed,
        "jobs": args.jobs,
        "results": results,
    }
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / "build_times.json").write_text(json.dumps(doc, indent=2) + "\n")
    (args.out / "build_times.md").write_text(render_markdown(doc))
    print(render_markdown(doc))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
