"""`kbopt ablate`: the catalog-guided search against a random order of the same moves and
a grid sample of the knobs, at an equal budget of measured trials (kbopt.workflow.ablation)."""

from __future__ import annotations

import argparse
import os
import shlex
import sys
from pathlib import Path
from typing import Any

from kbopt.bench.trials import parse_config
from kbopt.bench.warm_compile import warmer_for
from kbopt.cli.common import (
    check_output,
    command,
    positive_float,
    print_json,
    results_unwritten,
    store_from,
)
from kbopt.cli.cycle_cmds import BACKENDS, KERNEL_HELP, make_search_backend
from kbopt.comma_items import comma_items
from kbopt.errors import KbError
from kbopt.kernel import KernelSpec, load_spec
from kbopt.site.ablation import verdict
from kbopt.workflow.ablation import ARMS


def register(sub: argparse._SubParsersAction) -> None:
    p = command(
        sub,
        "ablate",
        "Does the catalog choose well? Run the catalog-guided search (profile, rank, apply the "
        "top applicable move, keep or go back), the same entries' moves in a random order, and "
        "a random sample of the knob grid (an autotuner), each with the same number of measured "
        "trials from the same version; report per arm the best percentage of the roofline floor and the trials needed "
        "to come within 5 percent of the best any arm found. Real results go to results/ablation/; "
        "fake ones only to --out.",
        "kbopt ablate mla_decode --from triton_v2 --arms catalog,random,grid --trials 24 "
        "--config decode --backend real",
    )
    p.add_argument("kernel", help=KERNEL_HELP)
    p.add_argument(
        "--spec", help="a spec.py path (or module:attr) of the same kernel, to load it from there"
    )
    p.add_argument(
        "--from",
        dest="start",
        help="the version whose knobs are searched (default: the first that sets any knob)",
    )
    p.add_argument(
        "--arms",
        default=",".join(ARMS),
        help=f"comma-separated arms, each once, from {', '.join(ARMS)} (default: all three)",
    )
    p.add_argument(
        "--trials",
        type=int,
        default=20,
        help="measured trials per arm, the start included; at least 2 (default 20)",
    )
    p.add_argument("--config", help="a trial name or name=value dims (default: the spec's first)")
    p.add_argument(
        "--seed", type=int, default=0, help="seed of the random and grid arms (default 0)"
    )
    p.add_argument(
        "--budget-s",
        type=positive_float,
        metavar="SECONDS",
        help="stop every arm after this much wall time (default: no limit)",
    )
    p.add_argument(
        "--backend",
        choices=BACKENDS,
        default="real",
        help="real: the GPU; fake: stand-in figures for a dry run (default: real)",
    )
    p.add_argument(
        "--compile-workers",
        type=int,
        help="processes that compile a Triton version's next configurations in parallel "
        "before each round is measured (default: one per core but one, at most 8, with the "
        "real backend; 0: each configuration compiles on its first measured call)",
    )
    p.add_argument(
        "--start-profile",
        metavar="FILE",
        help="the starting version's profile at this configuration, with hardware counters "
        "(`kbopt profile ... --counters require`: its Markdown, or its --json output): the "
        "catalog and random walks rank from it at the starting values instead of a "
        "timing-only profile, as `kbopt recommend` ranks it (its ncu passes are not trials)",
    )
    p.add_argument(
        "--out",
        type=Path,
        metavar="FILE.json",
        help="write the results to this file, checked before anything runs (default: "
        "results/ablation/<stamp>-<kernel>-<device>.json for real measurements; fake ones are "
        "written only where --out says)",
    )
    p.set_defaults(func=cmd_ablate)


def read_start_profile(source: str, spec: KernelSpec, start: str, config: Any) -> Any:
    """The profile in `source`: a profile's Markdown, or `kbopt profile --json` output (the
    entry of this kernel, version and configuration when it holds several), checked
    against the run (`start_profile_for`)."""
    import json

    from kbopt.contracts.profile import Profile
    from kbopt.textio import read_source
    from kbopt.workflow.ablation import start_profile_for

    text, shown = read_source(source)
    if not text.lstrip().startswith(("[", "{")):
        return start_profile_for(Profile.parse(text, shown), spec, start, config)
    try:
        doc = json.loads(text)
    except json.JSONDecodeError as exc:
        raise KbError(f"not valid JSON: {exc.msg}", shown, exc.lineno) from None
    entries = doc if isinstance(doc, list) else [doc]
    found = [e.get("profile") for e in entries if isinstance(e, dict)]
    texts = [x for x in found if isinstance(x, str)]
    if not texts or len(texts) < len(entries):
        raise KbError(
            "expected `kbopt profile --json` output: entries with a `profile` (its Markdown)",
            shown,
            1,
        )
    problems = []
    for markdown in texts:
        try:
            return start_profile_for(Profile.parse(markdown, shown), spec, start, config)
        except KbError as exc:
            problems.append(exc.message)
    raise KbError("; ".join(problems), shown, 1)


def cmd_ablate(args: argparse.Namespace) -> int:
    from kbopt.workflow.ablation import (
        TrialRow,
        default_start,
        results_path,
        run_ablation,
        write_results,
    )

    if args.out is not None:
        check_output(args.out)  # now, not after every arm's trials
    store = store_from(args)
    root = store.root
    spec = load_spec(args.spec or args.kernel, root)
    if args.spec and not _names(args.kernel, spec, root):
        raise KbError(
            f"KERNEL {args.kernel!r} and --spec {args.spec} (kernel {spec.name!r}) name "
            "different kernels: give one of them"
        )
    start = args.start or default_start(spec)
    if start not in spec.version_files():
        raise KbError(
            f"{spec.name} has no version {start!r}; known: {', '.join(spec.version_files())}"
        )
    config = parse_config(args.config or spec.trials[0].name, spec)
    arms = comma_items(args.arms, f"--arms {args.arms!r}", "arms")
    # Read and matched to the run before anything is measured.
    start_profile = (
        read_start_profile(args.start_profile, spec, start, config) if args.start_profile else None
    )
    if args.compile_workers is not None and args.compile_workers < 0:
        raise KbError(f"--compile-workers must be 0 or more (got {args.compile_workers})")
    cores = os.cpu_count() or 1
    if args.compile_workers is not None and args.compile_workers > cores:
        # Each worker is a process holding a CUDA context: more than the cores only queues
        # compilers behind each other and fills the GPU with contexts.
        raise KbError(
            f"--compile-workers {args.compile_workers} is more than this machine's {cores} "
            "cores; use at most one per core"
        )
    # Not the run's budget as the limit of one measurement: the first one also makes the
    # inputs, compiles and measures the ceilings, which took over 90 s for one kernel.
    backend = make_search_backend(args.backend, root)
    check_device = getattr(backend, "check_device", None)
    if check_device is not None:  # before the compile workers start, and before the start
        check_device()  # version is blamed for what the machine lacks
    warmer = warmer_for(
        args.backend, spec, start, str(root), config.dims_dict, args.compile_workers
    )

    def progress(arm: str, row: TrialRow) -> None:
        if args.json:
            return
        if row.status == "ok":
            shown = f"{row.duration_us:.1f} us ({row.pct_of_floor:.1f}% of floor)"
        else:
            shown = f"{row.status}: {row.note}"
        kept = "" if row.kept is None else (" kept" if row.kept else " back")
        what = row.move or ",".join(f"{k}={v}" for k, v in row.values.items())
        print(f"[ablate] {arm:<7} {row.n:>3}/{args.trials} {shown}{kept}  {what}", file=sys.stderr)

    if warmer is not None and not args.json:
        print(
            "[ablate] compiling each round's next configurations ahead in "
            f"{warmer.stats.workers} processes",
            file=sys.stderr,
        )
    try:
        doc = run_ablation(
            spec=spec,
            backend=backend,
            store=store,
            start=start,
            config=config,
            arms=arms,
            trials=args.trials,
            seed=args.seed,
            budget_s=args.budget_s,
            progress=progress,
            warmer=warmer,
            start_profile=start_profile,
            start_profile_source=args.start_profile or "",
        )
    finally:
        if warmer is not None:
            warmer.close()
        getattr(backend, "close", lambda: None)()
    doc["command"] = "kbopt " + " ".join(shlex.quote(a) for a in sys.argv[1:])
    for row in doc["rows"]:
        row["date"], row["versions"], row["command"] = doc["date"], doc["versions"], doc["command"]
    path: Path | None = None
    if args.out is not None:
        path = args.out
    elif not doc["fake"]:
        path = results_path(root, doc)
    if path is not None:
        try:
            write_results(path, doc)
        except OSError as exc:
            return results_unwritten(args, str(path), exc, {"written": None, **doc})
    if args.json:
        print_json({"written": str(path) if path else None, **doc})
        return 0
    print_summary(doc)
    print(verdict(doc).replace("**", ""))
    if doc["fake"]:
        print("[ablate] fake backend: stand-in figures, not measurements", file=sys.stderr)
    if path is not None:
        print(
            f"[ablate] wrote {store.display(path) if path.is_relative_to(root) else path}",
            file=sys.stderr,
        )
    else:
        print("[ablate] nothing written (fake figures go only where --out says)", file=sys.stderr)
    return 0


def print_summary(doc: dict[str, Any]) -> None:
    """The arms' table and what qualifies it: noise, in-place timing, compiles ahead."""
    print(f"{'arm':<8} {'trials':>6} {'best % of floor':>16} {'trials to 5% of best':>21}  stopped")
    for row in doc["rows"]:
        best = f"{row['best_pct_of_floor']:.1f}" if row["best_pct_of_floor"] is not None else "-"
        reach = row["trials_to_within_5pct"] or "never"
        print(f"{row['arm']:<8} {row['trials']:>6} {best:>16} {reach!s:>21}  {row['stopped']}")
    if doc.get("start_repeat_us") is not None:
        print(
            f"noise: the starting launch measured {doc['start_us']:.1f} us first and "
            f"{doc['start_repeat_us']:.1f} us last ({doc['noise_pct']:.1f}% apart)"
        )
    if doc.get("start_inputs_written"):
        where = ", ".join(str(i) for i in doc["start_inputs_written"])
        print(
            f"in place: the version writes its input(s) {where}; each call was timed on "
            "restored copies"
        )
    ahead = doc.get("compiled_ahead")
    if ahead:
        print(
            f"compiled ahead: {ahead['configs']} configurations in {ahead['batches']} parallel "
            f"batches, {ahead['seconds']:.0f} s of the run ({ahead['failed_in_worker']} failed "
            "there and were measured as usual)"
        )


def _names(kernel: str, spec: KernelSpec, root: Path) -> bool:
    """Whether KERNEL names the kernel that --spec loaded (by name, or as its own spec)."""
    if kernel == spec.name:
        return True
    try:
        return load_spec(kernel, root).spec_file == spec.spec_file
    except KbError:
        return False
