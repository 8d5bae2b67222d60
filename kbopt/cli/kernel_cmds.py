"""Kernel commands: `kernel list | check | new` and `bench` (thin wrappers over kbopt.kernel)."""

from __future__ import annotations

import argparse
import contextlib
import shlex
import signal
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from kbopt.cli.common import check_output, command, positive_int, print_json, results_unwritten
from kbopt.comma_items import comma_items
from kbopt.errors import KbError, ProblemList

KERNEL_HELP = (
    "the kernel: a name under kernels/, a path to its spec.py (or its folder), or module:attr"
)


def _root(args: argparse.Namespace) -> Path:
    """The project root: --root, KBOPT_ROOT, or the current folder (kernels/ lives there)."""
    import os

    if getattr(args, "root", None):
        return Path(args.root).resolve()
    if os.environ.get("KBOPT_ROOT"):
        return Path(os.environ["KBOPT_ROOT"]).resolve()
    try:
        from kbopt.store import find_project_root

        return find_project_root()
    except KbError:
        return Path.cwd().resolve()


def register(sub: argparse._SubParsersAction) -> None:
    kernel = sub.add_parser(
        "kernel",
        help="Kernels kbopt can measure: list them, check a spec, scaffold a new one.",
        description="Kernels kbopt can measure: list them, check a spec, scaffold a new one.",
        epilog="Example: kbopt kernel new softmax --dims rows,cols",
    )
    ksub = kernel.add_subparsers(dest="kernel_command", metavar="SUBCOMMAND")
    ksub.required = True

    p = command(
        ksub,
        "list",
        "List the kernels under kernels/ with their dims, trial points and versions.",
        "kbopt kernel list --json",
    )
    p.set_defaults(func=cmd_list)

    p = command(
        ksub,
        "check",
        "Validate a kernel spec: every problem with its file, or OK with a summary.",
        "kbopt kernel check add_rmsnorm",
    )
    p.add_argument("kernel", help=KERNEL_HELP)
    p.add_argument(
        "--strict",
        action="store_true",
        help="also fail on texts that still hold the scaffold's TODO placeholders",
    )
    p.add_argument(
        "--launch",
        action="append",
        default=[],
        metavar="VERSION",
        help="follow this Triton version's launch at the spec's last trial on this machine "
        "(its kernels compiled for sm_90, never run) and count the catalog metrics it records "
        "in launch_info's metrics as stated; repeat for more versions",
    )
    p.set_defaults(func=cmd_check)

    p = command(
        ksub,
        "new",
        "Scaffold kernels/NAME/ (spec, torch reference, a naive Triton version, a cycle plan), "
        "its CPU tests and its devlog; profile and cycle it with --backend fake at once.",
        "kbopt kernel new softmax --dims rows,cols --trial large:rows=8192,cols=4096",
    )
    p.add_argument(
        "name",
        help="the kernel's name (its folder, package and entry point): lower-case letters, "
        "digits and _, not a Python keyword",
    )
    p.add_argument("--dims", required=True, help="comma-separated dimension names, e.g. rows,cols")
    p.add_argument(
        "--trial",
        action="append",
        default=[],
        help="a trial point NAME:dim=value,... giving every dim; repeat for more, each with "
        "its own name (default: one point of ~16M elements)",
    )
    p.set_defaults(func=cmd_new)

    p = command(
        sub,
        "bench",
        "Check and time a kernel's versions and baselines side by side on the GPU, with the "
        "device's ceilings measured in the same run; writes the rows to the kernel's results/. "
        "Stopped part-way (SIGTERM from a time limit, --timeout, Ctrl-C), it still writes the "
        "configurations it finished.",
        "kbopt bench add_rmsnorm --versions triton_v1,triton_v5,torch --config large",
    )
    p.add_argument("kernel", help=KERNEL_HELP)
    p.add_argument("--versions", help="comma-separated versions (default: all, with baselines)")
    p.add_argument(
        "--config",
        action="append",
        help="a trial name or name=value dims; repeat (default: the spec's whole trial matrix)",
    )
    p.add_argument(
        "--rep-ms",
        type=positive_int,
        default=200,
        metavar="MS",
        help="milliseconds of timing repetitions per version (default 200)",
    )
    p.add_argument("--repeat", action="store_true", help="time every version twice (spread)")
    p.add_argument(
        "--graph",
        action="store_true",
        help="also time CUDA-graph replay and the host time per call",
    )
    where = p.add_mutually_exclusive_group()
    where.add_argument(
        "--out",
        type=Path,
        metavar="FOLDER",
        help="the folder the JSON rows file goes into (default: <kernel>/results; checked "
        "before anything runs)",
    )
    where.add_argument("--no-write", action="store_true", help="print the rows, write no file")
    p.add_argument(
        "--backend",
        choices=("real", "fake"),
        default="real",
        help="real: the GPU; fake: stand-in figures for a dry run, never written unless --out "
        "is given (default: real)",
    )
    p.set_defaults(func=cmd_bench)


def cmd_list(args: argparse.Namespace) -> int:
    from kbopt.kernel import discover, load_spec

    root = _root(args)
    out: list[dict[str, Any]] = []
    for path in discover(root):
        try:
            out.append(load_spec(path.parent.name, root).summary())
        except KbError as exc:  # one broken spec must not hide the others
            out.append({"name": path.parent.name, "folder": str(path.parent), "error": str(exc)})
    if args.json:
        print_json(out)
        return 0
    if not out:
        print(f"no kernels under {root / 'kernels'} (`kbopt kernel new NAME --dims ...`)")
    for k in out:
        if "error" in k:
            print(f"{k['name']}: INVALID ({k['error'].splitlines()[0]})")
            continue
        trials = "; ".join(
            f"{t['name']} " + ", ".join(f"{n}={v}" for n, v in t["dims"].items())
            for t in k["trials"]
        )
        print(f"{k['name']}: dims {', '.join(d['name'] for d in k['dims'])}; trials {trials}")
        print(f"  versions: {', '.join(k['versions']) or 'none'}")
    return 0


def cmd_check(args: argparse.Namespace) -> int:
    from kbopt.kernel import check_versions, load_spec, placeholders

    problems: list[KbError]
    try:
        spec = load_spec(args.kernel, _root(args))
        problems = list(check_versions(spec))
        if args.strict:
            problems += placeholders(spec)
    except ProblemList as exc:
        problems = exc.problems
    if problems:
        if args.json:
            print_json({"ok": False, "problems": [str(p) for p in problems]})
        else:
            for p in problems:
                print(p, file=sys.stderr)
        return 1
    summary = spec.summary()
    knob_values = {v: spec.knob_values(v) for v in spec.version_files()}
    baselines, notes = _baseline_report(spec)
    todo = placeholders(spec)
    unknown = [v for v in args.launch if v not in spec.version_files()]
    if unknown:
        print(
            f"kbopt: error: --launch: {spec.name} has no version {unknown[0]!r} "
            f"(its versions: {', '.join(spec.version_files()) or 'none'})",
            file=sys.stderr,
        )
        return 2
    followed = _followed_launches(spec, args.launch, _root(args))
    recorded = {m for r in followed.values() for m in r.get("metrics", {})}
    gaps = _shape_gaps(spec, _root(args), recorded)
    if args.json:
        print_json(
            {
                "ok": True,
                "placeholders": [str(p) for p in todo],
                "spec": summary,
                "knob_values": knob_values,
                "baselines": baselines,
                "baseline_notes": notes,
                "launches": followed,
                "unstated_shape_metrics": gaps,
            }
        )
        return 0
    print(f"{spec.name}: OK ({spec.locator})")
    print(
        f"  dims: {', '.join(d.name + (f' -> {d.metric}' if d.metric else '') for d in spec.dims)}"
    )
    for t in spec.trials:
        print(f"  trial {t.name}: {spec.shape(t.dims)} -- {t.why}")
    print(f"  versions: {', '.join(spec.version_files()) or 'none'}")
    print(f"  baselines: {', '.join(baselines) or 'none'}")
    for note in notes:
        print(f"    {note}")
    for version, r in followed.items():
        if "why" in r:
            print(f"  launch of {version} at {r['trial']}: not followed here ({r['why']})")
        else:
            said = ", ".join(f"{k}={v:g}" for k, v in sorted(r["metrics"].items()))
            print(f"  launch of {version} at {r['trial']} records: {said or 'no catalog metric'}")
    if gaps:
        print(
            "  facts of the problem or the launch that the catalog's entries for this kind of "
            "kernel read and this spec "
            "does not state (map a dim to the metric, Dim('n', '...', 'kv_len'), give it in "
            "fixed_metrics or shape_metrics, or have each version's launch record it in "
            "launch_info's metrics, so that those triggers can fire):"
        )
        for metric, names in gaps.items():
            print(f"    {metric}: {', '.join(names)}")
    if todo:
        print(
            f"  {len(todo)} text(s) still hold the scaffold's TODO placeholder (valid, but "
            "rankings, reports and the site show them):"
        )
        for p in todo:
            print(f"    {p}")
    return 0


def _followed_launches(spec: Any, versions: list[str], root: Path) -> dict[str, dict[str, Any]]:
    """{version: {"trial", "metrics"}} for each version's launch followed at the spec's last
    trial (the smallest, for most specs: its inputs are drawn on this machine's CPU), or
    {"trial", "why"} where it could not be followed here."""
    if not versions:
        return {}
    from kbopt.bench.launch_choices import LaunchFollower
    from kbopt.errors import VersionFailed

    trial = spec.trials[-1]
    follower = LaunchFollower(root)
    out: dict[str, dict[str, Any]] = {}
    try:
        for version in versions:
            print(f"following {version}'s launch at {trial.name}...", file=sys.stderr)
            try:
                _, why = follower.learn(spec, version, dict(trial.dims), None)
            except VersionFailed as exc:
                why = str(exc)
            if why:
                out[version] = {"trial": trial.name, "why": why}
            else:
                out[version] = {"trial": trial.name, "metrics": dict(follower.last_metrics)}
    finally:
        follower.close()
    return out


def _shape_gaps(spec: Any, root: Path, recorded: set[str] | None = None) -> dict[str, list[str]]:
    """The problem-shape metrics the project's catalog reads for this kind of kernel and the
    spec leaves unstated, less those a followed launch records ({} where the project has no
    catalog to read)."""
    from kbopt.errors import KbError
    from kbopt.spec_gaps import unstated_shape_metrics
    from kbopt.store import Store
    from kbopt.strategy import catalog_cards

    try:
        cards = catalog_cards(Store(root))
    except KbError:
        return {}
    gaps = unstated_shape_metrics(spec, cards)
    return {m: names for m, names in gaps.items() if m not in (recorded or set())}


def _baseline_report(spec: Any) -> tuple[list[str], list[str]]:
    """The baselines present here, and the lines the spec wrote about those it left out (a
    baseline whose third-party code is absent says why on stderr; captured, not lost)."""
    import contextlib
    import io

    said = io.StringIO()
    try:
        with contextlib.redirect_stderr(said):
            names = list(spec.load_baselines())
    except Exception as exc:  # a missing optional dependency (torch) is a note, not a failure
        names = []
        said.write(f"baselines not loaded: {type(exc).__name__}: {exc}\n")
    return names, [line.strip() for line in said.getvalue().splitlines() if line.strip()]


def cmd_new(args: argparse.Namespace) -> int:
    from kbopt.kernel import clear_cache
    from kbopt.kernel_scaffold import parse_dims, parse_trial, scaffold

    root = _root(args)
    dims = parse_dims(args.dims)
    trials = [parse_trial(t, dims) for t in args.trial]
    result = scaffold(root, args.name, dims, trials)
    clear_cache()
    if args.json:
        print_json({"kernel": args.name, "root": str(root), **result})
        return 0
    for rel in result["created"]:
        print(f"created {rel}")
    for rel in result["kept"]:
        print(f"kept    {rel} (already there)")
    print(
        f"next: kbopt profile {args.name} triton_v1 --backend fake, then "
        f"kbopt cycle {args.name} --backend fake --from triton_v1 --target 'pct_of_floor>=90' "
        f"--designer scripted:kernels/{args.name}/cycle-plan.json",
        file=sys.stderr,
    )
    return 0


def cmd_bench(args: argparse.Namespace) -> int:
    from kbopt.bench.suite import run_suite, table, write_rows
    from kbopt.bench.trials import default_matrix, parse_config
    from kbopt.kernel import load_spec

    if args.out is not None:
        check_output(args.out, folder=True)  # now, not after the whole matrix is measured
    root = _root(args)
    spec = load_spec(args.kernel, root)
    configs = [parse_config(c, spec) for c in args.config] if args.config else default_matrix(spec)
    if args.backend == "fake":
        return _fake_bench(args, spec, configs, root)
    versions, errors = spec.load_versions()
    for name, err in errors.items():
        print(f"[bench] SKIP {name}: {err}", file=sys.stderr)
    if args.versions:
        versions = {v: versions[v] for v in _chosen(args.versions, list(versions), spec.name)}
    command_line = " ".join(
        shlex.quote(a)
        for a in ["kbopt", "bench", args.kernel]
        + (["--versions", args.versions] if args.versions else [])
        + [x for c in args.config or [] for x in ("--config", c)]
        + ["--rep-ms", str(args.rep_ms)]
        + (["--repeat"] if args.repeat else [])
        + (["--graph"] if args.graph else [])
    )
    from kbopt.cli import CommandTimeout

    # The rows of every configuration timed to the end, kept when the run is stopped part-way:
    # by SIGTERM (a session's `timeout`), by `--timeout` or by Ctrl-C.
    finished: list[dict[str, Any]] = []
    stop: BaseException | None = None
    with stop_on_sigterm():
        try:
            run_suite(
                spec,
                versions,
                configs,
                rep_ms=args.rep_ms,
                command=command_line,
                repeat=args.repeat,
                graph=args.graph,
                finished=finished,
            )
        except (BenchStopped, CommandTimeout, KeyboardInterrupt) as exc:
            stop = exc
    rows = finished
    done = len({r["config"] for r in rows})
    how = (
        "stopped by SIGTERM (a time limit?)"
        if isinstance(stop, BenchStopped)
        else "stopped by --timeout"
        if isinstance(stop, CommandTimeout)
        else "interrupted"
    )
    stop_note = (
        f"{how} after {done} of {len(configs)} configurations; the rows of the "
        "configurations it finished are kept"
        if stop is not None
        else None
    )
    folder = args.out or spec.folder / "results"
    try:
        path = None if args.no_write or not rows else write_rows(rows, folder)
    except OSError as exc:
        return results_unwritten(args, str(folder), exc, {"rows": rows, "written": None})
    if args.json:
        doc: dict[str, Any] = {"rows": rows, "written": str(path) if path else None}
        if stop_note:
            doc["error"] = [stop_note]
        print_json(doc)
    else:
        if path is not None:
            print(f"[bench] wrote {len(rows)} rows to {path}", file=sys.stderr)
        if rows:
            print(table(rows, spec.dim_names))
        if stop_note:
            print(f"kbopt: error: bench {stop_note}", file=sys.stderr)
    if isinstance(stop, (CommandTimeout, KeyboardInterrupt)):
        raise stop  # the command's own exit status and message (124 for --timeout, 130)
    return 1 if stop is not None else 0


class BenchStopped(BaseException):
    """Raised by the SIGTERM handler of `kbopt bench`; a BaseException so that the suite's
    per-version `except Exception` (one broken version must not stop the matrix) lets it
    through."""


@contextlib.contextmanager
def stop_on_sigterm() -> Iterator[None]:
    """While inside: SIGTERM (what `timeout` sends) raises `BenchStopped` instead of
    killing the process, so the configurations already timed are written.  Outside the
    main thread signals cannot be caught, and nothing changes."""

    def handler(signum: int, frame: Any) -> None:
        raise BenchStopped

    try:
        previous = signal.signal(signal.SIGTERM, handler)
    except ValueError:  # not the main thread
        yield
        return
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)


def _chosen(text: str, known: list[str], kernel: str, note: str = "") -> list[str]:
    """The comma-separated versions of `--versions`, each one known, in the order given."""
    wanted = comma_items(text, f"--versions {text!r}", "versions")
    if not wanted:
        raise KbError(f"--versions {text!r} names no version; known: {', '.join(known) or 'none'}")
    twice = sorted({v for v in wanted if wanted.count(v) > 1})
    if twice:
        raise KbError(f"--versions {text!r}: {', '.join(twice)} given twice")
    missing = [v for v in wanted if v not in known]
    if missing:
        raise KbError(
            f"unknown version(s) {', '.join(missing)} of {kernel}; known: "
            + (", ".join(known) or "none")
            + (f" ({note})" if note else "")
        )
    return wanted


def _fake_bench(args: argparse.Namespace, spec: Any, configs: list[Any], root: Path) -> int:
    """The fake backend's stand-in rows, one per version file and configuration."""
    from kbopt.bench.backend import FakeBackend, measure_with_backoff
    from kbopt.bench.suite import table, write_rows

    backend = FakeBackend(root)
    names = backend.versions(spec)
    if args.versions:
        names = _chosen(args.versions, names, spec.name, "the fake backend knows version files")
    rows = []
    for config in configs:
        for name in names:
            m = measure_with_backoff(backend, spec, name, config)
            rows.append(
                {
                    "kernel": spec.name,
                    "version": name,
                    "family": spec.version_family(name),
                    "config": config.name,
                    **m.config.dims_dict,
                    "dims": m.config.dims_dict,
                    "status": "ok" if m.correct else "wrong",
                    "time_us": round(m.duration_us, 3),
                    "gbps": round(spec.bytes_moved(m.config.dims_dict) / m.duration_us / 1e3, 1),
                    "tflops": round(spec.flops(m.config.dims_dict) / m.duration_us / 1e6, 2),
                    "pct_of_floor": round(m.pct_of_floor or 0.0, 1),
                    "floor_us": round(m.floor_us or 0.0, 3),
                    "floor_bound": "memory",
                    "device": m.device,
                    "date": m.date,
                    "command": m.command,
                    "note": m.note,
                }
            )
    try:
        path = write_rows(rows, args.out) if args.out else None
    except OSError as exc:
        payload = {"rows": rows, "written": None, "backend": "fake"}
        return results_unwritten(args, str(args.out), exc, payload)
    if args.json:
        print_json({"rows": rows, "written": str(path) if path else None, "backend": "fake"})
        return 0
    print("[bench] fake backend: stand-in figures, not measurements", file=sys.stderr)
    if path is not None:
        print(f"[bench] wrote {len(rows)} rows to {path}", file=sys.stderr)
    print(table(rows, spec.dim_names))
    return 0
