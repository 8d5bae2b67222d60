"""Cycle commands: profile, cycle, tune (thin wrappers over kbopt.workflow and kbopt.bench)."""

from __future__ import annotations

import argparse
import json
import shlex
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from kbopt.bench.backend import FAKE_DEVICE_NAME, MeasurementBackend
from kbopt.bench.trials import TrialConfig, default_matrix, parse_config, trial_matrix
from kbopt.cli.common import command, positive_float, positive_int, print_json, store_from
from kbopt.errors import KbError
from kbopt.kernel import KernelSpec, load_spec
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
    p.add_argument("version")
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
        default="human",
        help="scripted:PLAN.json | human[:LANGUAGE] | catalog (applies the top-ranked entry's "
        "move to the kernel's knobs; exit 4 when none applies) | a registered agent designer",
    )
    p.add_argument(
        "--configs",
        help="';'-separated configurations: trial names or name=value dims "
        "(default: the spec's whole trial matrix)",
    )
    p.add_argument("--stress", help="one more configuration, as dims (needs --stress-reason)")
    p.add_argument(
        "--stress-reason", default="", help="the evidence that the default points are not enough"
    )
    p.add_argument("--max-iterations", type=positive_int, default=4)
    p.add_argument("--run-id", help="name of the run folder under runs/")
    p.add_argument("--resume", metavar="RUN_ID", help="continue a stopped or crashed run")
    _common(p, cycle=True)
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
    p.add_argument("version")
    p.add_argument(
        "--config", help="a trial name or name=value dims (default: the spec's first trial)"
    )
    p.add_argument(
        "--manual", action="append", default=[], help="k=v,k=v: one manual configuration"
    )
    p.add_argument(
        "--param", action="append", default=[], help="NAME=v1,v2 or NAME=lo..hi:xN (autotune)"
    )
    p.add_argument("--budget-min", type=positive_float, default=60.0)
    p.add_argument(
        "--seconds-per-config", type=positive_float, help="override the measured estimate"
    )
    p.add_argument("--promising", default="", help="why this version deserves > 1 hour")
    p.add_argument("--out", type=Path, help="write the tuning rows as JSON here")
    p.add_argument("--backend", choices=BACKENDS, default="real")
    p.set_defaults(func=cmd_tune)


def _common(p: argparse.ArgumentParser, cycle: bool = False) -> None:
    modes = ["auto", "off", "require", *(["baseline"] if cycle else [])]
    p.add_argument(
        "--counters",
        choices=modes,
        default="auto",
        help="hardware counters through ncu: auto (when readable), off, require"
        + (", baseline (the first profile only)" if cycle else ""),
    )
    p.add_argument("--language", choices=[lang.value for lang in Language])
    p.add_argument("--backend", choices=BACKENDS, default="real", help="real GPU or the fake")


def make_backend(name: str, root: Path) -> MeasurementBackend:
    if name == "fake":
        from kbopt.bench.backend import FakeBackend

        return FakeBackend(root)
    from kbopt.bench.real import RealBackend

    return RealBackend(root)


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
            language=args.language,
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
        print_json(results[0] if len(results) == 1 else results)
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
        stress = TrialConfig("stress", cfg.dims, args.stress_reason)
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
)


def remote_cycle_argv(args: argparse.Namespace, python: str) -> list[str]:
    """The `kbopt cycle` command line to run in the remote project root."""
    argv = [python, "-m", "kbopt", "--root", ".", "cycle", args.kernel]
    for flag, attr in REMOTE_CYCLE_OPTIONS:
        value = getattr(args, attr, None)
        if value not in (None, ""):
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


def cmd_cycle(args: argparse.Namespace) -> int:
    if getattr(args, "remote", None):
        return _cycle_remote(args)
    from kbopt.workflow import cycle
    from kbopt.workflow.designers import make_designer
    from kbopt.workflow.record import State

    store = store_from(args)
    root = store.root
    designer = make_designer(args.designer, root)
    if args.resume:
        from kbopt.workflow.record import load, run_dir

        backend = make_backend(load(run_dir(root, args.resume)).backend, root)
        run = cycle.resume(
            root,
            args.resume,
            backend=backend,
            designer=designer,
            store=store,
            on_state=_progress(),
        )
    else:
        if not args.target or not args.start:
            raise KbError("a new run needs --target and --from (or --resume RUN_ID)")
        spec = load_spec(args.kernel, root)
        run = cycle.start(
            root,
            kernel=spec,
            target=args.target,
            start_version=args.start,
            backend=make_backend(args.backend, root),
            designer=designer,
            designer_spec=args.designer,
            configs=_configs(args, spec),
            store=store,
            max_iterations=args.max_iterations,
            counters=args.counters,
            language=args.language,
            run_id=args.run_id,
            on_state=_progress(),
        )
    record = run.run()
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
            f"resume with: kbopt cycle {record.kernel} --resume {record.run_id} --designer {record.designer}",
            file=sys.stderr,
        )
    if record.designer_blocked:
        return 4  # the designer could not go on: a person or another designer must
    return 0 if record.state is State.DONE else 3


def _params(text: str) -> dict[str, int | float | str]:
    from kbopt.bench.tuning import parse_param

    out: dict[str, int | float | str] = {}
    for part in filter(None, (p.strip() for p in text.split(","))):
        name, values = parse_param(part)
        if len(values) != 1:
            raise KbError(f"--manual {text!r}: one value per parameter")
        out[name] = values[0]
    return out


def cmd_tune(args: argparse.Namespace) -> int:
    from kbopt.bench.backend import measure_with_backoff
    from kbopt.bench.tuning import TuneBudget, TuneSpace, parse_param, tune

    store = store_from(args)
    backend = make_backend(args.backend, store.root)
    spec = load_spec(args.kernel, store.root)
    config = parse_config(args.config or spec.trials[0].name, spec)
    knobs = {k.name: k for k in spec.knobs_for(args.version)}

    def typed(name: str, value: int | float | str) -> int | float | str:
        # `evict=true` on a command line is the text "true": give it the knob's type.
        return knobs[name].coerce(value) if name in knobs else value

    params = [parse_param(p) for p in args.param]
    space = (
        TuneSpace({name: [typed(name, v) for v in values] for name, values in params})
        if params
        else None
    )
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
        )
    finally:
        if warmer is not None:
            warmer.close()
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
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(json.dumps(data, indent=1, default=str) + "\n")
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
