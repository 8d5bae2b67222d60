"""The `kbopt` command: thin wrappers over the library.

Each module in `COMMAND_MODULES` registers its subcommands with `register(sub)`;
a subcommand's handler takes the parsed arguments and returns an exit code.  A
`KbError` is a user mistake: it is printed as one clean message (or a JSON object
under `--json`) and the exit code is 2, never a traceback.
"""

from __future__ import annotations

import argparse
import importlib
import json
import signal
import sys
from collections.abc import Sequence

from kbopt.errors import KbError, ProblemList

# One line per command group; each module defines `register(subparsers)`.
COMMAND_MODULES = (
    "kbopt.cli.catalog_cmds",
    "kbopt.cli.search_cmds",
    "kbopt.cli.agent_cmds",
    "kbopt.cli.site_cmds",
    "kbopt.cli.cycle_cmds",
    "kbopt.cli.init_cmds",
    "kbopt.cli.kernel_cmds",
    "kbopt.cli.pipeline_cmds",
    "kbopt.cli.mcp_cmds",
    "kbopt.cli.ablate_cmds",
)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="kbopt",
        description="kbopt: a typed, searchable knowledge base of GPU kernel optimizations.",
        epilog="Run `kbopt COMMAND --help` for a command's options and an example.",
    )
    parser.add_argument(
        "--root",
        help="project root (default: KBOPT_ROOT or the nearest folder with docs/knowledge)",
    )
    parser.add_argument(
        "--timeout",
        type=_seconds,
        metavar="SECONDS",
        help="give up after SECONDS of wall time (exit 124), whatever the command; "
        "Ctrl-C stops any command too (exit 130)",
    )
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    sub.required = True
    for module_name in COMMAND_MODULES:
        importlib.import_module(module_name).register(sub)
    return parser


class CommandTimeout(BaseException):
    """`--timeout` ran out (a BaseException: no `except Exception` in a library swallows it)."""


def _seconds(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        value = float("nan")
    if not 0 < value <= 7 * 86400:  # NaN fails this too
        raise argparse.ArgumentTypeError(f"{text!r} is not a number of seconds (0..604800)")
    return value


def _on_alarm(signum: int, frame: object) -> None:
    raise CommandTimeout


def _error(args: argparse.Namespace, problems: Sequence[object]) -> None:
    if getattr(args, "json", False):
        print(json.dumps({"error": [str(p) for p in problems]}, indent=2))
    else:
        for problem in problems:
            for line in str(problem).splitlines():
                print(f"kbopt: error: {line}", file=sys.stderr)


def main(argv: Sequence[str] | None = None) -> int:
    # `search|show|list ... --json` straight from the index snapshot when it can give
    # the full command's exact answer (no whoosh, numpy or pydantic to load).
    from kbopt.cli.quick import answer

    quick = answer(argv)
    if quick is not None:
        return quick
    parser = build_parser()
    args = parser.parse_args(argv)
    timer = args.timeout is not None and hasattr(signal, "SIGALRM")
    if timer:
        signal.signal(signal.SIGALRM, _on_alarm)
        signal.setitimer(signal.ITIMER_REAL, args.timeout)
    try:
        return int(args.func(args) or 0)
    except KbError as exc:
        _error(args, exc.problems if isinstance(exc, ProblemList) else [exc])
        return 2
    except CommandTimeout:
        _error(args, [f"gave up after {args.timeout:g} s (--timeout)"])
        return 124
    except KeyboardInterrupt:
        print("kbopt: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:
        return 0
    except OSError as exc:
        # The machine said no (permissions, a full disk...): one line, never a traceback.
        where = f"{exc.filename}: " if exc.filename else ""
        _error(args, [f"{where}{exc.strerror or exc}"])
        return 2
    finally:
        if timer:
            signal.setitimer(signal.ITIMER_REAL, 0)
