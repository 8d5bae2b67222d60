"""From results to devlog to catalog: `kbopt devlog` and `kbopt learn`, for any kernel.

Thin wrappers over `kbopt.devlog_results` (the devlog's generated blocks) and
`kbopt.learn_lessons` (a kernel's lessons as catalog evidence).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from kbopt.cli.common import command, print_json, store_from
from kbopt.cli.kernel_cmds import KERNEL_HELP
from kbopt.cli.kernel_cmds import _root as project_root
from kbopt.errors import KbError


def register(sub: argparse._SubParsersAction) -> None:
    p = command(
        sub,
        "devlog",
        "Rebuild the generated blocks (<!-- GEN:name -->) of a kernel's devlog, "
        "docs/kernels/KERNEL.md, from the kernel's results/ files; the rest of the page is "
        "kept byte for byte. With --check, change nothing and exit 1 naming each stale block.",
        "kbopt devlog mla_decode --check",
    )
    p.add_argument("kernel", nargs="?", help=KERNEL_HELP)
    p.add_argument("--check", action="store_true", help="exit 1 if a block is out of date")
    p.add_argument(
        "--all",
        action="store_true",
        help="every kernel under kernels/ whose devlog has generated blocks (others are "
        "skipped with a note)",
    )
    p.set_defaults(func=cmd_devlog)

    p = command(
        sub,
        "learn",
        "Append the evidence of a kernel's lessons (kernels/KERNEL/lessons.toml) to the "
        "catalog entries they name, computed from the results rows; evidence an entry "
        "already cites is not appended again.",
        "kbopt learn mla_decode --dry-run",
    )
    p.add_argument("kernel", help=KERNEL_HELP)
    p.add_argument("--dry-run", action="store_true", help="show the evidence tables, write nothing")
    p.set_defaults(func=cmd_learn)


def _devlog_one(root: Path, name: str, args: argparse.Namespace) -> dict[str, Any]:
    """One kernel's devlog rebuilt or checked; with --all, a kernel without generated
    blocks is skipped (its spec is not even loaded)."""
    from kbopt.devlog import devlog_path
    from kbopt.devlog_results import block_names, update_devlog
    from kbopt.kernel import load_spec

    path = devlog_path(root, name)
    if args.all:
        if not path.is_file():
            return {"kernel": name, "skipped": "no devlog", "stale": [], "written": False}
        if not block_names(path.read_text(encoding="utf-8")):
            return {"kernel": name, "skipped": "no generated block", "stale": [], "written": False}
    report = update_devlog(root, load_spec(name, root), check=args.check)
    if report.skipped:
        raise KbError(f"{name}: {report.skipped}, so there is nothing to generate")
    return report.as_dict()


def cmd_devlog(args: argparse.Namespace) -> int:
    from kbopt.kernel import discover

    root = project_root(args)
    if args.all and args.kernel:
        raise KbError(f"give a kernel ({args.kernel}) or --all, not both")
    if not args.all and not args.kernel:
        raise KbError("name a kernel (e.g. kbopt devlog mla_decode), or give --all")
    names = [p.parent.name for p in discover(root)] if args.all else [args.kernel]
    reports = [_devlog_one(root, name, args) for name in names]
    stale = [r for r in reports if r["stale"]]
    if args.json:
        print_json({"ok": not (args.check and stale), "kernels": reports})
        return 1 if args.check and stale else 0
    for r in reports:
        if r.get("skipped"):
            print(f"{r['kernel']}: skipped ({r['skipped']})", file=sys.stderr)
        elif args.check and r["stale"]:
            for block in r["stale"]:
                print(
                    f"{r['devlog']}: GEN:{block} is stale: run `kbopt devlog {r['kernel']}`",
                    file=sys.stderr,
                )
        elif r["written"]:
            print(f"{r['devlog']}: rebuilt {', '.join(r['stale'])}")
        else:
            print(f"{r['devlog']}: {len(r['blocks'])} generated blocks, already current")
    return 1 if args.check and stale else 0


def cmd_learn(args: argparse.Namespace) -> int:
    from kbopt.kernel import load_spec
    from kbopt.learn_lessons import learn

    root = project_root(args)
    spec = load_spec(args.kernel, root)
    actions = learn(spec, root, store_from(args), dry_run=args.dry_run)
    if args.json:
        print_json({"kernel": spec.name, "actions": [a.as_dict() for a in actions]})
        return 0
    for a in actions:
        b = a.block
        if args.dry_run:
            print(f"## {a.entry} ({a.action})\nSource: {b.source}\nCommand: {b.command}")
            for r in b.rows:
                print(f"| {r.config} | {r.before} | {r.after} | {r.change} |")
            continue
        verb = {"appended": "appended evidence to", "present": "unchanged"}[a.action]
        note = " (evidence already present)" if a.action == "present" else ""
        print(f"{verb} {a.entry}{note}" + (f"; {a.refined}" if a.refined else ""))
    return 0
