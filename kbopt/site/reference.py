"""Reference pages generated from the code: the CLI (from the argparse tree) and the
API (one page per `kbopt` module, `kbopt.site.apidoc`), so neither can drift from
what ships."""

from __future__ import annotations

import argparse
import os
import pkgutil
import re
from collections.abc import Iterator
from contextlib import contextmanager

from kbopt.site.pages import fenced

# Modules that run code on import or are not API.
SKIP_MODULES = {"kbopt.__main__"}
# argparse wraps help at this width: what a code block of the content column holds
# without scrolling at 1400 px (narrower screens scroll inside the block).
CLI_COLUMNS = 78


@contextmanager
def _fixed_width(columns: int = CLI_COLUMNS) -> Iterator[None]:
    """argparse wraps help at the terminal width; pin it so the page is stable."""
    old = os.environ.get("COLUMNS")
    os.environ["COLUMNS"] = str(columns)
    try:
        yield
    finally:
        if old is None:
            os.environ.pop("COLUMNS", None)
        else:
            os.environ["COLUMNS"] = old


_PIECE = re.compile(r"(\S+?,(?=\S)|\S+)(\s*)")


def wrap_help(text: str, width: int = CLI_COLUMNS) -> str:
    """argparse's help with every line at most `width` wide where it can be broken.

    kbopt's commands keep their descriptions and examples unwrapped (a raw formatter,
    so examples stay copyable in a terminal); on the page they would make the block
    scroll sideways.  Long lines break at spaces and after the commas of a ``{a,b,c}``
    choice list, continuing under the line's own indentation.
    """
    out = []
    for line in text.splitlines():
        if len(line) <= width:
            out.append(line)
            continue
        indent = line[: len(line) - len(line.lstrip())]
        cont = indent + ("    " if len(indent) < 24 else "")
        current = indent
        for m in _PIECE.finditer(line.lstrip()):
            piece, sep = m.group(1), m.group(2)
            if current.strip() and len(current) + len(piece) > width:
                out.append(current.rstrip())
                current = cont
            current += piece + (" " if sep else "")
        out.append(current.rstrip())
    return "\n".join(out) + ("\n" if text.endswith("\n") else "")


def walk_commands(
    parser: argparse.ArgumentParser, path: tuple[str, ...] = ()
) -> Iterator[tuple[tuple[str, ...], argparse.ArgumentParser, str]]:
    """(command path, parser, one-line help) for every subcommand, depth first."""
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            helps = {a.dest: a.help or "" for a in action._choices_actions}
            for name, sub in action.choices.items():
                yield (*path, name), sub, helps.get(name, "")
                yield from walk_commands(sub, (*path, name))


def render_cli_reference(parser: argparse.ArgumentParser | None = None) -> str:
    """MyST for the CLI reference: the top-level help, then one section per command."""
    if parser is None:
        from kbopt.cli import build_parser

        parser = build_parser()
    with _fixed_width():
        lines = [
            "## `kbopt`",
            "",
            fenced(wrap_help(parser.format_help()), "text"),
            "",
        ]
        for path, sub, help_text in walk_commands(parser):
            full = " ".join(("kbopt", *path))
            anchor = "cli-" + "-".join(path)
            lines += [
                f"({anchor})=",
                f"## `{full}`",
                "",
                help_text or "",
                "",
                fenced(wrap_help(sub.format_help()), "text"),
                "",
            ]
    return "\n".join(lines).rstrip() + "\n"


def api_modules() -> list[str]:
    """Every importable module of the `kbopt` package, sorted by name."""
    import kbopt

    names = ["kbopt"]
    for info in pkgutil.walk_packages(kbopt.__path__, prefix="kbopt."):
        if info.name not in SKIP_MODULES:
            names.append(info.name)
    return sorted(names)


def render_api_page(module: str) -> str:
    """One API page (`kbopt.site.apidoc`).  The package root only gets its docstring:
    its members are re-exports documented in their own modules (documenting them
    twice would be a duplicate-object warning)."""
    from kbopt.site.apidoc import render_api_rst

    rst = render_api_rst(module, members=module != "kbopt")
    return f"# `{module}`\n\n" + fenced(rst, "{eval-rst}") + "\n"
