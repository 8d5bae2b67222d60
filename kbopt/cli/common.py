"""Helpers shared by the command modules."""

from __future__ import annotations

import argparse
import json
import math
import os
import sys
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from kbopt.errors import KbError

if TYPE_CHECKING:  # the store (pydantic, yaml) loads only for commands that use it
    from kbopt.store import Store


def _number(kind: type, lo: float, hi: float, what: str) -> Callable[[str], Any]:
    """An argparse `type=`: a finite number of `kind` in lo..hi, else a clear usage error."""

    def convert(text: str) -> Any:
        try:
            value = kind(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{text!r} is not {what}") from None
        if not (math.isfinite(value) and lo <= value <= hi):
            raise argparse.ArgumentTypeError(f"{text!r} is not {what} ({lo:g}..{hi:g})")
        return value

    convert.__name__ = what  # argparse names the type in its messages
    return convert


# Command-line numbers: each option says which of these it takes.
positive_int = _number(int, 1, 10**9, "a positive integer")
count_limit = _number(int, 1, 1000, "a count")
positive_float = _number(float, 1e-9, 1e9, "a positive number")
sm_version = _number(int, 10, 999, "an SM version such as 80, 90 or 100")
port_number = _number(int, 0, 65535, "a TCP port")


def store_from(args: argparse.Namespace) -> Store:
    from kbopt.store import Store

    root = getattr(args, "root", None)
    if not root:
        return Store()
    path = Path(root)
    if not path.exists():
        raise KbError(f"--root {root}: no such folder")
    if not path.is_dir():
        raise KbError(f"--root {root}: not a folder")
    return Store(path)


def check_output(path: Path, *, folder: bool = False, flag: str = "--out") -> None:
    """Refuse, before anything is measured, an output path the end of the run could not
    write: a folder where a file goes (or a file where a folder goes), a parent that is a
    file, a folder this user may not write in.  A long run must not be lost to a typo."""
    if path.is_dir() and not folder:
        raise KbError(f"{flag} {path}: is a folder; give the name of the file to write")
    if path.exists() and not path.is_dir() and folder:
        raise KbError(f"{flag} {path}: is a file; give the folder to write the results into")
    if path.is_file():
        if not os.access(path, os.W_OK):
            raise KbError(f"{flag} {path}: cannot write it (permission denied)")
        return
    # What exists of the path: the folders after it are made when the results are written.
    existing = next(p for p in (path, *path.parents) if p.exists() or p == Path(p.anchor))
    if not existing.is_dir():
        raise KbError(f"{flag} {path}: {existing} is a file, not a folder")
    if not os.access(existing, os.W_OK | os.X_OK):
        raise KbError(f"{flag} {path}: cannot write in {existing} (permission denied)")


def results_unwritten(args: argparse.Namespace, where: str, exc: OSError, payload: Any) -> int:
    """The end of a run whose results file could not be written: the results go to stdout
    instead, so nothing measured is lost, and the error says so (inside the one JSON
    document under --json); exit 2."""
    message = f"{where}: cannot write ({exc.strerror or exc}); the results are on stdout instead"
    if args.json:
        print_json({**payload, "error": [message]})
    else:
        print_json(payload)
        print(f"kbopt: error: {message}", file=sys.stderr)
    return 2


def add_json_flag(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--json", action="store_true", help="machine-readable output for agents")


def print_json(obj: Any) -> None:
    # Strict JSON: a NaN or an infinity that slipped through prints as null, never as
    # the `NaN` / `Infinity` that JSON parsers reject.
    json.dump(_finite(obj), sys.stdout, indent=2, ensure_ascii=False, default=str, allow_nan=False)
    sys.stdout.write("\n")


def _finite(obj: Any) -> Any:
    if isinstance(obj, float):
        return obj if math.isfinite(obj) else None
    if isinstance(obj, dict):
        return {k: _finite(v) for k, v in obj.items()}
    if isinstance(obj, list | tuple):
        return [_finite(v) for v in obj]
    return obj


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
    from kbopt.cli import seconds

    # The global `kbopt --timeout S COMMAND` may also follow the command (its own dest,
    # so that `kbopt` can refuse it given in both places rather than pick one).
    parser.add_argument(
        "--timeout",
        dest="timeout_after_command",
        type=seconds,
        default=argparse.SUPPRESS,
        metavar="SECONDS",
        help="give up after SECONDS of wall time (exit 124); the same as kbopt --timeout",
    )
    return parser


def check_or_regenerate(
    args: Any,
    *,
    label: str,
    stale_prefix: str,
    command_hint: str,
    stale: Callable[[], list[str]],
    regenerate: Callable[[], list[str]],
    left_out: Callable[[], list[str]] = list,
) -> int:
    """The shared shape of commands over generated files (`catalog`, `agent export-claude`).

    With `--check`, exit 1 and name each stale file; otherwise regenerate and say what changed.
    `left_out` names each source that could not be read (an entry that does not parse):
    the generated files lack it, so either way the command warns and exits 1.
    """
    missing = left_out()
    for problem in missing:
        print(f"kbopt: warning: {problem} (left out of {label}; run `kbopt lint`)", file=sys.stderr)
    if args.check:
        out = stale()
        if args.json:
            print_json({"ok": not out and not missing, "stale": out})
        for name in out:
            print(f"{stale_prefix}{name} is stale: run `{command_hint}`", file=sys.stderr)
        return 1 if out or missing else 0
    changed = regenerate()
    if args.json:
        print_json({"changed": changed})
    else:
        print(f"{label} " + (f"updated: {', '.join(changed)}" if changed else "already current"))
    return 1 if missing else 0
