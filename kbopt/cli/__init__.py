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
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    sub.required = True
    for module_name in COMMAND_MODULES:
        importlib.import_module(module_name).register(sub)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        return int(args.func(args) or 0)
    except KbError as exc:
        if getattr(args, "json", False):
            problems = exc.problems if isinstance(exc, ProblemList) else [exc]
            print(json.dumps({"error": [str(p) for p in problems]}, indent=2))
        else:
            for line in str(exc).splitlines():
                print(f"kbopt: error: {line}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("kbopt: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:
        return 0
