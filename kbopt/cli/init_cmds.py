"""`kbopt init [PATH]`: set up a repository to work with kbopt (see kbopt.project_init)."""

from __future__ import annotations

import argparse
from pathlib import Path

from kbopt.cli.common import command, print_json
from kbopt.project_init import init_project


def register(sub: argparse._SubParsersAction) -> None:
    p = command(
        sub,
        "init",
        "Set up a repository for kbopt: docs/knowledge/ (your entries, over the ones bundled "
        "with kbopt), kernels/, the Claude Code agents and skills (.claude/), catalog/. "
        "Existing files are kept, so running it again is safe.",
        "kbopt init my-repo",
    )
    p.add_argument(
        "path",
        nargs="?",
        type=Path,
        help="the repository's folder (default: --root, else the current folder), created "
        "if missing in a folder that exists",
    )
    p.set_defaults(func=cmd_init)


def cmd_init(args: argparse.Namespace) -> int:
    path = args.path or (Path(args.root) if getattr(args, "root", None) else Path.cwd())
    report = init_project(path)
    if args.json:
        print_json(report.to_dict())
        return 0
    print(f"kbopt project at {report.root}")
    for label, paths in (
        ("created", report.created),
        ("updated", report.updated),
        ("kept", report.kept),
    ):
        if paths:
            print(f"  {label}: {_grouped(paths)}")
    print(
        "next: `kbopt list` (the bundled entries are there already), "
        "`kbopt new optimization my-idea`, `kbopt kernel new NAME --dims a,b`"
    )
    return 0


def _grouped(paths: list[str]) -> str:
    """`docs/ (13 items), kernels/README.md`: one group per top-level folder."""
    groups: dict[str, list[str]] = {}
    for path in paths:
        groups.setdefault(path.split("/", 1)[0], []).append(path)
    return ", ".join(
        items[0] if len(items) == 1 else f"{top}/ ({len(items)} items)"
        for top, items in groups.items()
    )
