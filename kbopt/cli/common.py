"""Helpers shared by the command modules."""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Callable
from typing import Any

from kbopt.store import Store


def store_from(args: argparse.Namespace) -> Store:
    return Store(args.root) if getattr(args, "root", None) else Store()


def add_json_flag(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--json", action="store_true", help="machine-readable output for agents")


def print_json(obj: Any) -> None:
    json.dump(obj, sys.stdout, indent=2, ensure_ascii=False, default=str)
    sys.stdout.write("\n")


def command(
    sub: Any, name: str, help_text: str, example: str, *, json_flag: bool = True
) -> argparse.ArgumentParser:
    """A subparser whose help ends with an `Example:` line (checked by the CLI tests)."""
    parser: argparse.ArgumentParser = sub.add_parser(
        name,
        help=help_text,
        description=help_text,
        epilog=f"Example: {example}",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    if json_flag:
        add_json_flag(parser)
    return parser


def check_or_regenerate(
    args: Any,
    *,
    label: str,
    stale_prefix: str,
    command_hint: str,
    stale: Callable[[], list[str]],
    regenerate: Callable[[], list[str]],
) -> int:
    """The shared shape of commands over generated files (`catalog`, `agent export-claude`).

    With `--check`, exit 1 and name each stale file; otherwise regenerate and say what changed.
    """
    if args.check:
        out = stale()
        if args.json:
            print_json({"ok": not out, "stale": out})
        for name in out:
            print(f"{stale_prefix}{name} is stale: run `{command_hint}`", file=sys.stderr)
        return 1 if out else 0
    changed = regenerate()
    if args.json:
        print_json({"changed": changed})
    else:
        print(f"{label} " + (f"updated: {', '.join(changed)}" if changed else "already current"))
    return 0
