"""Snippets: the windowed count by binary search equals the plain quadratic count."""

from __future__ import annotations

import random
import re

from kbopt.search.fast import _SNIPPET_CHARS, make_snippet


def _reference(content: str, stems: list[str]) -> str:
    """The first implementation: every window counted by a scan of every match."""
    prefixes = sorted({s[:-1] if s.endswith("i") and len(s) > 3 else s for s in stems}, key=len)
    text = " ".join(content.split())
    if not prefixes:
        return text[:_SNIPPET_CHARS]
    pattern = re.compile(
        r"\b(?:" + "|".join(re.escape(p) for p in reversed(prefixes)) + r")\w*", re.I
    )
    spans = [m.span() for m in pattern.finditer(text)]
    if not spans:
        return text[:_SNIPPET_CHARS]
    best_start, best_count = 0, -1
    for s, _ in spans:
        start = max(0, s - 40)
        count = sum(1 for a, b in spans if a >= start and b <= start + _SNIPPET_CHARS)
        if count > best_count:
            best_start, best_count = start, count
    end = min(len(text), best_start + _SNIPPET_CHARS)
    body = pattern.sub(lambda m: f"**{m.group(0)}**", text[best_start:end])
    return ("…" if best_start > 0 else "") + body + ("…" if end < len(text) else "")


def test_snippets_equal_the_reference_on_random_text() -> None:
    rng = random.Random(5)
    words = ["split", "splits", "kv", "cache", "occupancy", "the", "tile", "x" * 150, "warp"]
    for _ in range(300):
        content = " ".join(rng.choice(words) for _ in range(rng.randint(0, 120)))
        stems = rng.sample(
            ["split", "kv", "occupanci", "warp", "zzz", "x" * 150], rng.randint(0, 3)
        )
        assert make_snippet(content, stems) == _reference(content, stems)
