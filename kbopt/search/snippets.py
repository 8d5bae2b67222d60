"""Search-hit snippets: the densest window of query words, matches in bold.

Standard library only: the quick path of the command line (`kbopt.cli.quick`) uses
it as well as the whoosh path.
"""

from __future__ import annotations

import re
from bisect import bisect_left, bisect_right
from collections.abc import Iterable

_SNIPPET_CHARS = 180


def normalize(content: str) -> str:
    """The text a snippet is cut from: every run of white space made one space."""
    return " ".join(content.split())


def make_snippet(content: str, stems: Iterable[str], *, normalized: bool = False) -> str:
    """About 180 characters around the densest run of query words, matches in **bold**.

    Stems are matched as word prefixes (`conflict` finds "conflicts"); a trailing `i`
    that the stemmer writes for `y` is dropped so "occupancy" still matches `occup`.
    `normalized`: `content` is already `normalize`d (a warm index keeps it so).
    """
    prefixes = sorted({s[:-1] if s.endswith("i") and len(s) > 3 else s for s in stems}, key=len)
    text = content if normalized else normalize(content)
    if not prefixes:
        return text[:_SNIPPET_CHARS]
    pattern = re.compile(
        r"\b(?:" + "|".join(re.escape(p) for p in reversed(prefixes)) + r")\w*", re.I
    )
    spans = [m.span() for m in pattern.finditer(text)]
    if not spans:
        return text[:_SNIPPET_CHARS]
    # The window that starts shortly before a match and contains the most matches (the
    # first such window on a tie).  Matches do not overlap and come in order, so both
    # their starts and their ends are sorted: two binary searches count a window.
    starts = [a for a, _ in spans]
    ends = [b for _, b in spans]
    best_start, best_count = 0, -1
    for s, _ in spans:
        start = max(0, s - 40)
        count = max(0, bisect_right(ends, start + _SNIPPET_CHARS) - bisect_left(starts, start))
        if count > best_count:
            best_start, best_count = start, count
    end = min(len(text), best_start + _SNIPPET_CHARS)
    window = text[best_start:end]
    body = pattern.sub(lambda m: f"**{m.group(0)}**", window)
    return ("…" if best_start > 0 else "") + body + ("…" if end < len(text) else "")
