"""Small Markdown helpers shared by the template and the contracts: pipe tables."""

from __future__ import annotations

import re
from collections.abc import Sequence

_SEPARATOR = re.compile(r"^:?-{3,}:?$")


def split_row(line: str) -> list[str]:
    """Cells of one `| a | b |` line; `\\|` inside a cell is a literal pipe."""
    body = line.strip().removeprefix("|").removesuffix("|")
    return [c.strip().replace("\\|", "|") for c in re.split(r"(?<!\\)\|", body)]


def is_separator(cells: Sequence[str]) -> bool:
    return bool(cells) and all(_SEPARATOR.match(c) for c in cells)


def parse_table(lines: Sequence[str]) -> tuple[list[str], list[list[str]]]:
    """(header, rows) of a pipe table given its lines; the separator line is skipped."""
    rows = [split_row(line) for line in lines if line.strip().startswith("|")]
    if not rows:
        return [], []
    header, body = rows[0], rows[1:]
    return header, [r for r in body if not is_separator(r)]


def escape_cell(text: str) -> str:
    return str(text).replace("|", "\\|").replace("\n", " ")


def render_table(header: Sequence[str], rows: Sequence[Sequence[object]]) -> str:
    """A pipe table with a `|---|` separator sized like the header cells."""
    out = [
        "| " + " | ".join(header) + " |",
        "|" + "|".join("-" * (len(h) + 2) for h in header) + "|",
    ]
    out += ["| " + " | ".join(escape_cell(str(c)) for c in row) + " |" for row in rows]
    return "\n".join(out)
