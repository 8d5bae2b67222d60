"""Cycle commands: profile, cycle, tune (thin wrappers over kbopt.workflow and kbopt.bench)."""

from __future__ import annotations

import argparse
import json
import shlex
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from kbopt.bench.backend import FAKE_DEVICE_NAME, MeasurementBackend
from kbopt.bench.trials import TrialConfig, default_matrix, parse_config, trial_matrix
from kbopt.cli.common import (
    check_output,
    command,
    positive_float,
    positive_int,
    print_json,
    results_unwritten,
    store_from,
)
from kbopt.comma_items import comma_items
from kbopt.errors import KbError
from kbopt.kernel import KernelSpec, load_spec
from kbopt.ranking import default_language
from kbopt.vocab import Language

if TYPE_CHECKING:
    from kbopt.workflow.record import RunRecord

BACKENDS = ("real", "fake")
KERNEL_HELP = (
    "the kernel: a name under kernels/, a path to its spec.py (or its folder), or module:attr"
)


def register(sub: argparse._SubParsersAction) -> None:
    p = command(
        sub,
        "profile",
        "Profile one kernel version at one configuration: timing, roofline, ncu counters "
        "when readable, bottleneck, Top 3 Opportunities; updates the devlog's performance section.",
        "kbopt profile add_rmsnorm triton_v2 --config large",
    )
    p.add_argument("kernel", help=KERNEL_HELP)
    p.add_argument("version", help="the version to profile, e.g. triton_v2 (kbopt kernel list)")
    p.add_argument(
        "--config",
        action="append",
        help="a trial name of the kernel's spec, or its dims as name=value,... (e.g. "
        "rows=8192,hidden=4096); repeat for several (default: the spec's first trial)",
    )
    _common(p)
    p.add_argument(
        "--no-devlog",
        action="store_true",
        help="do not update docs/kernels/<k>.md (never updated from the fake backend)",
    )
    p.add_argument(
        "--budget-s",
        type=positive_float,
        default=300.0,
        help="wall-time seconds the profile of one configuration may take in all: the "
        "measurement first, then ncu (timing pass + counters of the kernels that carry the "
        "time) in what is left; past it the profile keeps what was read (default 300)",
    )
    p.set_defaults(func=cmd_profile)

    p = command(
        sub,
        "cycle",
        "Run the optimization cycle (ANALYZE..LEARN) on a kernel, one optimization at a time, "
        "with backups and byte-identical restore; resumable; ends with the Optimization Summary.",
        "kbopt cycle mla_decode --target 'pct_of_floor>=50' --from triton_v1 "
        "--designer scripted:runs/plans/mla_decode_ladder.json",
    )
    p.add_argument("kernel", help=KERNEL_HELP)
    p.add_argument("--target", help="`metric op value` that must hold at every configuration")
    p.add_argument("--from", dest="start", help="the version to start from")
    p.add_argument(
        "--designer",
        help="scripted:PLAN.json | human[:LANGUAGE] | catalog (applies the top-ranked entry's "
        "move to the kernel's knobs; exit 4 when none applies) | a registered agent designer "
        "(default: human; on --resume, the run's own designer)",
    )
    p.add_argument(
        "--configs",
        help="';'-separated configurations: trial names or name=value dims "
        "(default: the spec's whole trial matrix)",
    )
    p.add_argument("--stress", help="one more configuration, as dims (needs --stress-reason)")
    p.add_argument("--stress-reason", help="the evidence that the default points are not enough")
    p.add_argument("--max-iterations", type=positive_int, help="attempts at most (default 4)")
    p.add_argument(
        "--run-id", help="name of the run folder under runs/ (default: a time stamp and the kernel)"
    )
    p.add_argument(
        "--resume",
        metavar="RUN_ID",
        help="continue a stopped or crashed run, with the target, configurations and backend "
        "it was started with (only --designer may change)",
    )
    p.add_argument(
        "--require-target",
        action="store_true",
        help="exit 5 when the run ends without meeting the target (for CI jobs); by default "
        "a finished run exits 0 either way and its summary says whether the goal was reached",
    )
    _common(p, cycle=True)
    # Unset unless given, so that --resume can refuse them (a resumed run keeps its own);
    # a new run falls back to the documented defaults.
    p.set_defaults(counters=None, backend=None)
    p.add_argument(
        "--remote",
        type=Path,
        metavar="CONTEXT.json",
        help="run the cycle on a SLURM cluster: the same command inside the allocation of "
        "this Remote Execution Context (ssh + srun, checked alive first), output streamed back",
    )
    p.set_defaults(func=cmd_cycle)

    p = command(
        sub,
        "tune",
        "Tune a version's parameters: manual tiles first, then an optional coarse autotune "
        "inside a time budget (default 60 min); unbounded sweeps are refused. With the real "
        "backend a Triton version's configurations are compiled ahead, several at once, in "
        "worker processes.",
        "kbopt tune mla_decode triton_v5 --manual block_n=32 --manual block_n=64 "
        "--param block_n=32,64 --param num_stages=2,3 --budget-min 10",
    )
    p.add_argument("kernel", help=KERNEL_HELP)
    p.add_argument("version", help="the version whose knobs are tuned, e.g. triton_v5")
    p.add_argument(
        "--config", help="a trial name or name=value dims (default: the spec's first trial)"
    )
    p.add_argument(
        "--manual",
        action="append",
        default=[],
        metavar="K=V,...",
        help="one manual configuration, measured first; repeat for more (at least one; "
        "each configuration once)",
    )
    p.add_argument(
        "--param",
        action="append",
        default=[],
        metavar="NAME=VALUES",
        help="the autotune's values of one knob: NAME=v1,v2, NAME=lo..hi:xFACTOR or "
        "NAME=lo..hi:STEP; repeat for more knobs (a knob given twice takes both lists)",
    )
    p.add_argument(
        "--budget-min",
        type=positive_float,
        default=60.0,
        metavar="MINUTES",
        help="wall-time minutes the tuning may take (default 60; more needs --promising)",
    )
    p.add_argument(
        "--seconds-per-config",
        type=positive_float,
        metavar="SECONDS",
        help="seconds one configuration takes, for the autotune's plan (default: the mean "
        "of the manual ones)",
    )
    p.add_argument(
        "--promising",
        default="",
        metavar="REASON",
        help="why this version deserves a budget above 60 minutes",
    )
    p.add_argument(
        "--out",
        type=Path,
        metavar="FILE.json",
        help="also write the tuning rows as JSON to this file (checked before anything runs)",
    )
    p.add_argument(
        "--backend",
        choices=BACKENDS,
        default="real",
        help="real: the GPU; fake: stand-in figures for a dry run (default: real)",
    )
    p.set_defaults(func=cmd_tune)


def _common(p: argparse.ArgumentParser, cycle: bool = False) -> None:
    modes = ["auto", "off", "require", *(["baseline"] if cycle else [])]
    p.add_argument(
        "--counters",
        choices=modes,
        default="auto",
        help="hardware counters through ncu: auto (when readable), off, require"
        + (", baseline (the first profile only)" if cycle else "")
        + " (default: auto)",
    )
    p.add_argument(
        "--language",
        choices=[lang.value for lang in Language],
        help="the language whose catalog entries are ranked besides the shared ones (default: "
        + (
            "the one the cycle's SELECT step chooses)"
            if cycle
            else "the profiled version's own, as kbopt recommend ranks: triton for triton_v3; "
            "shared entries only for a baseline such as torch)"
        ),
    )
    p.add_argument(
        "--backend",
        choices=BACKENDS,
        default="real",
        help="real: the GPU; fake: stand-in figures for a dry run (default: real)",
    )


def make_backend(name: str, root: Path) -> MeasurementBackend:
    if name == "fake":
        from kbopt.bench.backend import FakeBackend

        return FakeBackend(root)
    from kbopt.bench.real import RealBackend

    return RealBackend(root)


def make_search_backend(name: str, root: Path) -> Any:
    """The backend of a search over many configurations or versions (`kbopt ablate`, `kbopt
    tune`, `kbopt cycle`): on a GPU each measurement runs in a child process, so that a
    configuration or a designed version whose launch faults (which leaves CUDA unusable in
    its process) fails alone instead of failing every trial or attempt after it
    (`kbopt.bench.isolated`, which also bounds one measurement's time)."""
    if name == "fake":
        return make_backend(name, root)
    from kbopt.bench.isolated import IsolatedBackend

    return IsolatedBackend(root)


def cmd_profile(args: argparse.Namespace) -> int:
    from kbopt.workflow.profiler import profile_version, update_devlog

    store = store_from(args)
    backend = make_backend(args.backend, store.root)
    if args.budget_s <= 0:
        raise KbError(f"--budget-s must be positive (got {args.budget_s})")
    if hasattr(backend, "ncu_timeout_s"):
        backend.ncu_timeout_s = args.budget_s
    spec = load_spec(args.kernel, store.root)
    configs = [parse_config(c, spec) for c in (args.config or [spec.trials[0].name])]
    results = []
    for i, config in enumerate(configs, 1):
        if len(configs) > 1 and not args.json:
            print(f"[profile] {i}/{len(configs)}: {config.name} ({config.shape})", file=sys.stderr)
        if hasattr(backend, "ncu_deadline"):
            backend.ncu_deadline = time.monotonic() + args.budget_s
        run = profile_version(
            backend,
            spec,
            args.version,
            config,
            counters=args.counters,
            # the version's own language by default, so this Top 3 is what `kbopt
            # recommend` gives for the profile it writes
            language=args.language if args.language else default_language(args.version),
            store=store,
        )
        # A devlog records measurements: stand-in figures of the fake backend stay out.
        fake = run.measurement.device == FAKE_DEVICE_NAME
        devlog = None if args.no_devlog or fake else update_devlog(store.root, run)
        data = run.as_dict()
        data["devlog"] = store.display(devlog) if devlog else None
        results.append(data)
        if not args.json:
            sys.stdout.write(run.profile.render())
            for w in run.warnings:
                print(f"warning: matching anti-pattern {w}", file=sys.stderr)
            if devlog:
                print(f"updated {store.display(devlog)}", file=sys.stderr)
    if args.json:
        # Always a list, one run per configuration, so a caller parses one shape.
        print_json(results)
    return 0


def _configs(args: argparse.Namespace, spec: KernelSpec) -> list[TrialConfig]:
    if args.configs is None:
        configs = default_matrix(spec)
    else:
        configs = [parse_config(c, spec) for c in args.configs.split(";") if c.strip()]
    if not configs:
        raise KbError("--configs names no configuration")
    if args.stress:
        cfg = parse_config(args.stress, spec)
        stress = TrialConfig("stress", cfg.dims, args.stress_reason or "")
        configs.append(trial_matrix(spec, stress)[-1])  # refuses a stress point without a reason
    return configs


def _progress() -> Callable[[RunRecord], None]:
    """Each event as it happens, under the state that wrote it (on stderr: stdout is the
    summary)."""
    from kbopt.workflow.cycle import progress_printer

    return progress_printer(sys.stderr)


# `kbopt cycle` options forwarded to the cluster by --remote: (flag, attribute).
REMOTE_CYCLE_OPTIONS = (
    ("--target", "target"),
    ("--from", "start"),
    ("--designer", "designer"),
    ("--configs", "configs"),
    ("--stress", "stress"),
    ("--stress-reason", "stress_reason"),
    ("--max-iterations", "max_iterations"),
    ("--run-id", "run_id"),
    ("--resume", "resume"),
    ("--counters", "counters"),
    ("--language", "language"),
    ("--backend", "backend"),
    ("--require-target", "require_target"),  # a flag: forwarded when set
)


def remote_cycle_argv(args: argparse.Namespace, python: str) -> list[str]:
    """The `kbopt cycle` command line to run in the remote project root."""
    argv = [python, "-m", "kbopt", "--root", ".", "cycle", args.kernel]
    for flag, attr in REMOTE_CYCLE_OPTIONS:
        value = getattr(args, attr, None)
        if isinstance(value, bool):
            argv += [flag] if value else []
        elif value not in (None, ""):
            argv += [flag, str(value)]
    if args.json:
        argv.append("--json")
    return argv


def _cycle_remote(args: argparse.Namespace) -> int:
    import subprocess

    from kbopt.agents.remote import RemoteContext, RemoteExecutor

    context = RemoteContext.load(args.remote)
    local_root = store_from(args).root
    RemoteExecutor(context, local_root).check_alive()
    wrapped = context.wrap(remote_cycle_argv(args, context.python))
    if not args.json:
        print(f"[cycle] on {context.host}, SLURM job {context.job_id}", file=sys.stderr)
    try:
        # Output streams through; Ctrl-C and --timeout stop ssh (and with it the step).
        return subprocess.run(wrapped, cwd=local_root, check=False).returncode
    except FileNotFoundError:
        raise KbError("ssh is not installed here: --remote needs an ssh client") from None


# What a run is started with: `--resume` continues the run as it was started.
START_ONLY_OPTIONS = (
    ("--target", "target"),
    ("--from", "start"),
    ("--configs", "configs"),
    ("--stress", "stress"),
    ("--stress-reason", "stress_reason"),
    ("--max-iterations", "max_iterations"),
    ("--run-id", "run_id"),
    ("--counters", "counters"),
    ("--language", "language"),
    ("--backend", "backend"),
)


def _check_cycle_flags(args: argparse.Namespace) -> None:
    """Refuse flags that would otherwise be dropped without a word."""
    if args.stress_reason is not None and not args.stress:
        raise KbError("--stress-reason explains a --stress configuration: give --stress too")
    if args.resume:
        given = [flag for flag, attr in START_ONLY_OPTIONS if getattr(args, attr) is not None]
        if given:
            raise KbError(
                f"--resume {args.resume} continues the run as it was started: drop "
                f"{', '.join(given)} (a new run takes other settings)"
            )


def cmd_cycle(args: argparse.Namespace) -> int:
    _check_cycle_flags(args)
    if getattr(args, "remote", None):
        return _cycle_remote(args)
    from kbopt.workflow import cycle
    from kbopt.workflow.designers import make_designer
    from kbopt.workflow.record import State

    store = store_from(args)
    root = store.root
    if args.resume:
        from kbopt.workflow.record import load, run_dir

        started = load(run_dir(root, args.resume))
        if args.kernel not in (started.kernel, started.spec):
            named = load_spec(args.kernel, root).name
            if named != started.kernel:
                raise KbError(f"run {args.resume} optimizes {started.kernel}, not {named}")
        designer_spec = args.designer or started.designer
        run = cycle.resume(
            root,
            args.resume,
            backend=make_search_backend(started.backend, root),
            designer=make_designer(designer_spec, root),
            designer_spec=designer_spec,
            store=store,
            on_state=_progress(),
        )
    else:
        if not args.target or not args.start:
            raise KbError("a new run needs --target and --from (or --resume RUN_ID)")
        cycle.parse_target(args.target)  # before anything is loaded
        designer_spec = args.designer or "human"
        designer = make_designer(designer_spec, root)
        spec = load_spec(args.kernel, root)
        run = cycle.start(
            root,
            kernel=spec,
            target=args.target,
            start_version=args.start,
            backend=make_search_backend(args.backend or "real", root),
            designer=designer,
            designer_spec=designer_spec,
            configs=_configs(args, spec),
            store=store,
            max_iterations=args.max_iterations or 4,
            counters=args.counters or "auto",
            language=args.language,
            run_id=args.run_id,
            on_state=_progress(),
        )
    try:
        record = run.run()
    finally:
        close = getattr(run.backend, "close", None)
        if close is not None:  # the measuring child process, on a GPU
            close()
    restarts = getattr(run.backend, "restarts", 0)
    if restarts:  # on record: some attempt's launch broke its process (or hung, or died)
        record.log(
            f"the measuring process was replaced {restarts} time(s): a version's launch "
            "faulted, hung or killed it, and the attempts after it were measured in a new one"
        )
        run.save()
    folder = store.display(run.folder)
    if args.json:
        print_json({"run": folder, "record": record.model_dump(mode="json")})
    elif record.state is State.DONE and record.designer_blocked:
        if record.attempts:  # what the run did before the designer stopped
            sys.stdout.write(record.summary)
        print(f"kbopt cycle: stopped: {record.designer_blocked}", file=sys.stderr)
        print(f"run record: {folder}/record.json", file=sys.stderr)
    elif record.state is State.DONE:
        sys.stdout.write(record.summary)
        print(f"run record: {folder}/record.json", file=sys.stderr)
    else:
        print(
            f"paused in {record.state.value}: {record.events[-1].message}\n"
            f"resume with: kbopt cycle {record.kernel} --resume {record.run_id}",
            file=sys.stderr,
        )
    if record.designer_blocked:
        return 4  # the designer could not go on: a person or another designer must
    if record.state is not State.DONE:
        return 3
    if args.require_target and not record.target_met:
        if not args.json:
            print(f"kbopt cycle: target not met: {record.target}", file=sys.stderr)
        return 5
    return 0


def _params(text: str) -> dict[str, int | float | str]:
    from kbopt.bench.tuning import parse_param

    out: dict[str, int | float | str] = {}
    parts = comma_items(text, f"--manual {text!r}", "NAME=VALUE items")
    if text.strip() and not parts:  # commas alone: not the version as it is ("")
        raise KbError(f"--manual {text!r} names no NAME=VALUE item")
    for part in parts:
        name, values = parse_param(part)
        if len(values) != 1:
            raise KbError(f"--manual {text!r}: one value per parameter")
        if name in out:
            raise KbError(f"--manual {text!r}: {name} is given twice")
        out[name] = values[0]
    return out


def cmd_tune(args: argparse.Namespace) -> int:
    from kbopt.bench.backend import measure_with_backoff
    from kbopt.bench.tuning import TuneBudget, TuneRow, TuneSpace, parse_param, tune

    if args.out:
        check_output(args.out)  # now, not after a run of up to an hour
    store = store_from(args)
    backend = make_search_backend(args.backend, store.root)
    spec = load_spec(args.kernel, store.root)
    config = parse_config(args.config or spec.trials[0].name, spec)
    knobs = {k.name: k for k in spec.knobs_for(args.version)}

    def typed(name: str, value: int | float | str) -> int | float | str:
        # `evict=true` on a command line is the text "true": give it the knob's type.
        return knobs[name].coerce(value) if name in knobs else value

    # A knob given by several --param takes the values of all of them, in order.
    values: dict[str, list[int | float | str]] = {}
    for name, given in (parse_param(p) for p in args.param):
        slot = values.setdefault(name, [])
        for value in given:
            if typed(name, value) not in slot:
                slot.append(typed(name, value))
    space = TuneSpace(values) if values else None
    manual = [{k: typed(k, v) for k, v in _params(m).items()} for m in args.manual]
    budget = TuneBudget(seconds=args.budget_min * 60.0, promising=args.promising)

    provenance: dict[str, object] = {}

    def measure(params: dict[str, int | float | str]) -> float:
        m = measure_with_backoff(backend, spec, args.version, config, params)
        if not provenance:  # results files carry device, versions, date and command
            provenance.update(device=m.device, versions=m.versions, date=m.date)
        if not m.correct:
            raise RuntimeError(f"wrong result (error {m.error})")
        return m.duration_us

    from kbopt.bench.warm_compile import warmer_for

    def progress(row: TuneRow, n: int, total: int) -> None:
        if not args.json:  # on stderr: stdout is the table, or the JSON
            shown = f"{row.duration_us:.1f} us" if row.duration_us is not None else row.error
            print(
                f"[tune] {row.phase} {n}/{total} {json.dumps(row.params)} {shown}", file=sys.stderr
            )

    warmer = warmer_for(args.backend, spec, args.version, str(store.root), config.dims_dict)
    try:
        report = tune(
            measure,
            manual=manual,
            space=space,
            budget=budget,
            seconds_per_config=args.seconds_per_config,
            warm=warmer.warm if warmer is not None else None,
            warm_width=warmer.stats.workers if warmer is not None else 1,
            progress=progress,
        )
    finally:
        if warmer is not None:
            warmer.close()
        getattr(backend, "close", lambda: None)()
    data: dict[str, object] = {
        "backend": backend.name,
        "kernel": spec.name,
        "version": args.version,
        "config": config.as_dict(),
        "command": "kbopt " + " ".join(shlex.quote(a) for a in sys.argv[1:]),
        **provenance,
        "compiled_ahead": warmer.stats.as_dict() if warmer is not None else None,
    }
    data.update(report.as_dict())
    if args.out:
        try:
            args.out.parent.mkdir(parents=True, exist_ok=True)
            args.out.write_text(json.dumps(data, indent=1, default=str) + "\n")
        except OSError as exc:
            return results_unwritten(args, f"--out {args.out}", exc, data)
    if args.json:
        print_json(data)
    else:
        for row in report.rows:
            shown = f"{row.duration_us:.1f} us" if row.duration_us is not None else row.error
            print(f"{row.phase:<9} {json.dumps(row.params):<50} {shown}")
        best = report.best
        if best:
            print(f"best: {json.dumps(best.params)} at {best.duration_us:.1f} us")
        if backend.name == "fake":
            print("[tune] fake backend: stand-in figures, not measurements", file=sys.stderr)
        if report.stopped_by_budget:
            print("stopped at the time budget", file=sys.stderr)
    return 0
