"""Shared parsing pieces for the task, new-version and report contracts.

Each contract is a title line followed by `###` sections; a parser walks the sections
and records every problem as `path:line: message` before raising them together.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from kbopt.errors import Problem, ProblemList
from kbopt.markdown import is_separator, split_row

HEADING_RE = re.compile(r"^###\s+(?P<title>[^:]+?)\s*(?::\s*(?P<inline>.*?))?\s*$")
NUMBERED_RE = re.compile(r"^\s*(?P<num>\d+)[.)]\s+(?P<text>.*)$")
BULLET_RE = re.compile(r"^\s*[-*]\s+(?P<text>.*)$")


@dataclass
class Section:
    title: str  # the heading text before any colon
    inline: str  # what follows the colon on the heading line
    line: int  # 1-based line of the heading
    body: list[tuple[int, str]] = field(default_factory=list)

    def nonblank(self) -> list[tuple[int, str]]:
        return [(n, t) for n, t in self.body if t.strip()]


class Collector:
    """Problems found while parsing one document."""

    def __init__(self, path: str):
        self.path = path
        self.problems: list[Problem] = []

    def add(self, line: int, message: str) -> None:
        self.problems.append(Problem(message, self.path, line))

    def raise_if_any(self) -> None:
        if self.problems:
            raise ProblemList(self.problems)


def split_document(
    text: str, title_re: re.Pattern[str], shape: str, errors: Collector
) -> tuple[re.Match[str], int, list[Section]]:
    """The title match, its line, and the `###` sections; raises the collected problems if
    the document does not start with its title."""
    lines = text.splitlines()
    start = next((i for i, ln in enumerate(lines) if ln.strip()), None)
    m = title_re.match(lines[start].strip()) if start is not None else None
    if start is None or m is None:
        errors.add((start or 0) + 1, f"the document must start with `{shape}`")
        raise ProblemList(errors.problems)
    sections: list[Section] = []
    preamble: list[tuple[int, str]] = []
    for i in range(start + 1, len(lines)):
        line = lines[i]
        hm = HEADING_RE.match(line.strip())
        if hm:
            sections.append(Section(hm["title"].strip(), (hm["inline"] or "").strip(), i + 1))
        elif line.strip().startswith("## "):
            errors.add(i + 1, f"unexpected level-2 heading {line.strip()!r}: one document each")
        elif sections:
            sections[-1].body.append((i + 1, line))
        else:
            preamble.append((i + 1, line))
    # Text between the title and the first section belongs to a pseudo-section "".
    if any(t.strip() for _, t in preamble):
        sections.insert(0, Section("", "", start + 1, preamble))
    return m, start + 1, sections


def find(sections: list[Section], title: str) -> Section | None:
    low = title.lower()
    return next((s for s in sections if s.title.lower() == low), None)


def require(
    sections: list[Section], title: str, errors: Collector, line: int, hint: str
) -> Section | None:
    s = find(sections, title)
    if s is None:
        errors.add(line, f"missing section `### {title}` ({hint})")
    return s


def table_rows(
    section: Section, columns: tuple[str, ...], errors: Collector, what: str
) -> list[tuple[int, list[str]]]:
    """Rows of the section's pipe table whose header must be `columns` exactly."""
    rows = [(n, t) for n, t in section.body if t.strip().startswith("|")]
    if not rows:
        errors.add(section.line, f"the {what} section has no table")
        return []
    header = split_row(rows[0][1])
    if [h.lower() for h in header] != [c.lower() for c in columns]:
        errors.add(rows[0][0], f"{what} columns must be: {' | '.join(columns)}")
        return []
    out = []
    for n, t in rows[1:]:
        cells = split_row(t)
        if is_separator(cells):
            continue
        if len(cells) != len(columns):
            errors.add(n, f"{what} row has {len(cells)} cells, expected {len(columns)}")
            continue
        out.append((n, cells))
    return out


def items(section: Section, errors: Collector, what: str, numbered: bool) -> list[tuple[int, str]]:
    """The numbered (`1. x`) or bulleted (`- x`) items of a section; other text is a problem."""
    pattern = NUMBERED_RE if numbered else BULLET_RE
    out = []
    for n, t in section.nonblank():
        m = pattern.match(t)
        if m is None:
            shape = "`1. ...`" if numbered else "`- ...`"
            errors.add(n, f"{what}: expected a {shape} item, got {t.strip()!r}")
            continue
        out.append((n, m["text"].strip()))
    return out
