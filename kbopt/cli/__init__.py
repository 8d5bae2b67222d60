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
from typing import Any, NoReturn

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


class _Parser(argparse.ArgumentParser):
    """argparse, except that under `--json` a usage error is a JSON `{"error": [...]}`
    too (exit 2): an agent that asked for JSON gets JSON, whatever went wrong."""

    json_requested = False  # set by `main` from the command line

    def error(self, message: str) -> NoReturn:
        if message == "unrecognized arguments: --json" and self.prog == "kbopt":
            # `kbopt --json list`: the option belongs to each command, after its name
            message += " (--json is a command's option: put it after the command, e.g. `kbopt list --json`)"
        if _Parser.json_requested:
            print(json.dumps({"error": [f"{self.prog}: {message}"]}, indent=2))
            sys.exit(2)
        super().error(message)


def build_parser(argv: Sequence[str] | None = None) -> argparse.ArgumentParser:
    parser = _Parser(
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
        type=seconds,
        metavar="SECONDS",
        help="give up after SECONDS of wall time (exit 124), whatever the command; "
        "Ctrl-C stops any command too (exit 130)",
    )
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    sub.required = True
    # For a command line (`argv`), a command an agent calls often loads its own module
    # only (the others import the workflow, the site builder, the bench...); anything
    # else, `--help` included, and a parser built for introspection (no `argv`) load all.
    home = COMMAND_HOMES.get(_command_word(argv) or "") if argv is not None else None
    for module_name in (home,) if home else COMMAND_MODULES:
        importlib.import_module(module_name).register(sub)
    return parser


# The module that registers each of the commands agents call again and again (a test
# checks each is registered there).
COMMAND_HOMES = {
    **dict.fromkeys(("search", "recommend", "index"), "kbopt.cli.search_cmds"),
    **dict.fromkeys(("show", "list", "vocab", "lint", "add", "new"), "kbopt.cli.catalog_cmds"),
    "mcp": "kbopt.cli.mcp_cmds",
}


def _command_word(argv: Sequence[str] | None) -> str | None:
    """The COMMAND of `kbopt [--root R] [--timeout S] COMMAND ...`, if there is one."""
    args = list(argv or ())
    i = 0
    while i < len(args):
        a = args[i]
        if a in ("--root", "--timeout"):
            i += 2
        elif a.startswith(("--root=", "--timeout=")):
            i += 1
        elif a.startswith("-"):
            return None  # --help, or something the full parser should judge
        else:
            return a
    return None


class CommandTimeout(BaseException):
    """`--timeout` ran out (a BaseException: no `except Exception` in a library swallows it)."""


def seconds(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        value = float("nan")
    if not 0 < value <= 7 * 86400:  # NaN fails this too
        raise argparse.ArgumentTypeError(
            f"{text!r} is not a number of seconds (more than 0, at most 604800: a week)"
        )
    return value


# Set once `--timeout` ran out in this process (read by `run`'s unraisable hook).
_ALARM_FIRED: list[bool] = []


def _on_alarm(signum: int, frame: object) -> None:
    _ALARM_FIRED.append(True)
    raise CommandTimeout


def _timed_out(exc: BaseException) -> bool:
    """Whether `exc` was raised because `--timeout` ran out: the alarm can land inside a
    library that catches everything and raises its own error (pydantic building a
    validator while a slow start-up imports the contracts), with the timeout as its cause."""
    seen: set[int] = set()
    at: BaseException | None = exc
    while at is not None and id(at) not in seen:
        if isinstance(at, CommandTimeout):
            return True
        seen.add(id(at))
        at = at.__cause__ or at.__context__
    return False


def _gave_up(args: argparse.Namespace) -> int:
    _error(args, [f"gave up after {args.timeout:g} s (--timeout)"])
    return 124


def _error(args: argparse.Namespace, problems: Sequence[object]) -> None:
    if getattr(args, "json", False):
        print(json.dumps({"error": [str(p) for p in problems]}, indent=2))
    else:
        for problem in problems:
            for line in str(problem).splitlines():
                print(f"kbopt: error: {line}", file=sys.stderr)


def run() -> None:
    """The `kbopt` command: `main`, then exit with its status.  After `--timeout` ran out,
    objects the alarm left half-built (an HTTP client interrupted in its constructor) may
    fail in their destructors as the process ends; Python would print each as "Exception
    ignored" with a traceback under the one-line reason.  The command is over by then, so
    such reports are dropped, from the moment the alarm fired (the half-built object may
    be collected while `main` is still unwinding, before it returns); `main` itself,
    called in a process that goes on, changes nothing global."""
    report = sys.unraisablehook

    def drop_after_timeout(unraisable: Any) -> None:
        if not _ALARM_FIRED:
            report(unraisable)

    sys.unraisablehook = drop_after_timeout
    sys.exit(main())


def main(argv: Sequence[str] | None = None) -> int:
    # Ctrl-C at any point (even while the quick path or the parser is still loading) is a
    # one-line exit 130, never a traceback.
    try:
        return _main(argv)
    except KeyboardInterrupt:
        print("kbopt: interrupted", file=sys.stderr)
        return 130


def _main(argv: Sequence[str] | None) -> int:
    # `search|show|list|recommend` straight from the index snapshot when it can give
    # the full command's exact answer (no whoosh, numpy or pydantic to load).
    from kbopt.cli.quick import answer

    try:
        quick = answer(argv)
    except Exception:  # the quick path only ever saves time: on any doubt the full CLI answers
        quick = None
    if quick is not None:
        return quick
    argv = list(sys.argv[1:] if argv is None else argv)
    _Parser.json_requested = "--json" in argv
    parser = build_parser(argv)
    args = parser.parse_args(argv)
    after = getattr(args, "timeout_after_command", None)
    if after is not None:
        if args.timeout is not None:
            parser.error(
                f"--timeout given both before {args.command} ({args.timeout:g} s) and after "
                f"it ({after:g} s): give it once"
            )
        args.timeout = after
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
        return _gave_up(args)
    except KeyboardInterrupt:
        print("kbopt: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:
        return 0
    except OSError as exc:
        if _timed_out(exc):
            return _gave_up(args)
        # The machine said no (permissions, a full disk...): one line, never a traceback.
        where = f"{exc.filename}: " if exc.filename else ""
        _error(args, [f"{where}{exc.strerror or exc}"])
        return 2
    except Exception as exc:
        if not _timed_out(exc):
            raise
        return _gave_up(args)
    finally:
        if timer:
            signal.setitimer(signal.ITIMER_REAL, 0)
