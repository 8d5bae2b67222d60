"""Checks beyond parsing: the whole catalog must hold together.

Parsing (`kbopt.template`, `kbopt.store`) already rejects malformed files: missing or
out-of-order sections, unknown vocabulary, bad triggers, malformed evidence, files
in the wrong folder, duplicate names.  Lint adds what needs the whole catalog or a
reader's eye: interactions that point at unknown entries, entries with no evidence,
placeholders left from `kbopt new`, evidence from kbopt's fake measurement backend
(stand-in figures for dry runs and tests, never a measurement), triggers on a metric
that nothing measures (`kbopt.metric_sources`), local evidence (devices, absolute
times, versions) in a Generalization, and an anti-pattern whose evidence says it helps
(`kbopt.entry_checks`).
"""

from __future__ import annotations

import re
from pathlib import Path

from kbopt.entry_checks import anti_pattern_helps, generalization_problems
from kbopt.errors import KbError, Problem
from kbopt.metric_sources import produced_by
from kbopt.store import Store

_PLACEHOLDER = re.compile(r"\bTODO\b")
FAKE_DEVICE = "fake-gpu"  # what kbopt.bench.backend.FakeBackend writes as the device


def _line_of(path: Path, needle: str, after: str | None = None) -> int:
    started = after is None
    for i, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
        if not started and line.strip() == after:
            started = True
            continue
        if started and needle in line:
            return i
    return 1


def lint(store: Store) -> list[KbError]:
    """Every problem in the knowledge base, sorted by file and line."""
    result = store.load_all()
    problems: list[KbError] = list(result.problems)
    names = {p.stem for p in store.entry_files()}
    sources = produced_by()
    for entry in result.entries:
        path = result.paths[entry.name]
        shown = store.display(path)
        for inter in entry.interactions:
            if inter.target not in names:
                line = _line_of(path, f"`{inter.target}`", after="## Interactions")
                problems.append(
                    Problem(f"interaction points at unknown entry {inter.target!r}", shown, line)
                )
            elif inter.target == entry.name:
                line = _line_of(path, f"`{inter.target}`", after="## Interactions")
                problems.append(Problem("an entry cannot interact with itself", shown, line))
        if not entry.evidence:
            line = _line_of(path, "## Performance Evidence")
            problems.append(
                Problem(
                    "no Performance Evidence: every entry must be sourced (local experiment or external report)",
                    shown,
                    line,
                )
            )
        for block in entry.evidence:
            if FAKE_DEVICE in (block.device or "") or "kbopt-fake" in (block.versions or ""):
                line = _line_of(path, block.device or "kbopt-fake", after="## Performance Evidence")
                problems.append(
                    Problem(
                        "evidence from the fake measurement backend: stand-in figures are not "
                        "measurements; remove the block",
                        shown,
                        line,
                    )
                )
        for trig in entry.triggers:
            if not sources.get(trig.metric):
                line = _line_of(path, trig.metric, after="## When to Apply")
                problems.append(
                    Problem(
                        f"trigger `{trig.expression}` reads {trig.metric}, which nothing "
                        "measures (no profiler counter, timing, kernel spec or cycle value "
                        "produces it: see `kbopt vocab --json`, field produced_by)",
                        shown,
                        line,
                    )
                )
        for message, needle in generalization_problems(entry):
            line = _line_of(path, needle, after="## Generalization")
            problems.append(Problem(message, shown, line))
        for row in anti_pattern_helps(entry):
            line = _line_of(path, row.change, after="## Performance Evidence")
            problems.append(
                Problem(
                    f"anti-pattern evidence says the pattern helps ({row.config!r}: "
                    f"{row.change}); an anti-pattern's evidence is the harm it does (write the "
                    "row as 'with the pattern -> without it', or file the entry as an "
                    "optimization)",
                    shown,
                    line,
                )
            )
        for i, text in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
            if _PLACEHOLDER.search(text):
                problems.append(Problem("placeholder 'TODO' left in the entry", shown, i))
                break
    return sorted(problems, key=lambda p: (p.path or "", p.line or 0, p.message))
