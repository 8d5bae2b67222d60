"""Every bad input a person or an agent can give kbopt gets a clean answer.

A clean answer is a one-line `path:line: message` per problem and exit 2 (or, under
`--json`, a valid JSON `{"error": [...]}`), or a correct acceptance - never a
traceback, never a hang (each call runs under a deadline), never silent acceptance.

The tables are grouped by what is given: entry files (`kbopt add`), profiles and
analyses (`kbopt recommend`, `kbopt agent autopilot`), command-line arguments, and odd
files inside the knowledge base.  Each row is one defect class.
"""

from __future__ import annotations

import json
import os
import socket
from collections.abc import Callable
from pathlib import Path

import pytest

from tests.core.sample import VALID
from tests.robustness.harness import call, clean_error, json_error, strict_json

# --------------------------------------------------------------------------- entries


def _sub(old: str, new: str) -> Callable[[str], bytes]:
    def edit(text: str) -> bytes:
        assert old in text, old
        return text.replace(old, new, 1).encode("utf-8")

    return edit


def _bytes(edit: Callable[[str], bytes | str]) -> Callable[[str], bytes]:
    def wrapped(text: str) -> bytes:
        out = edit(text)
        return out if isinstance(out, bytes) else out.encode("utf-8")

    return wrapped


# (case, how VALID is broken, fragment of the message, line of the first problem or None)
ENTRY_CASES: list[tuple[str, Callable[[str], bytes], str, int | None]] = [
    # encodings
    (
        "latin-1",
        lambda t: t.replace("Splits the work.", "Splits the wörk.").encode("latin-1"),
        "not UTF-8",
        21,
    ),
    ("utf-16", lambda t: t.encode("utf-16"), "not UTF-8", 1),
    ("overlong-utf8", lambda t: t.encode().replace(b"Splits", b"Spl\xc0\xafits"), "not UTF-8", 21),
    ("surrogate-bytes", lambda t: t.encode().replace(b"Splits", b"\xed\xa0\x80"), "not UTF-8", 21),
    ("nul-byte", _sub("Splits the work.", "Splits\x00 the work."), "control character U+0000", 21),
    (
        "escape-char",
        _sub("Splits the work.", "Splits \x1b[31mthe work."),
        "control character U+001B",
        21,
    ),
    (
        "c1-next-line",
        _sub("Splits the work.", "Splits\x85the work."),
        "control character U+0085",
        21,
    ),
    # dates
    (
        "impossible-date",
        _sub("created: 2026-12-01", "created: 2026-02-30"),
        "not a real calendar date",
        10,
    ),
    (
        "year-zero",
        _sub("created: 2026-12-01", "created: 0000-01-01"),
        "not a real calendar date",
        10,
    ),
    (
        "month-13",
        _sub("updated: 2026-12-02", "updated: 2026-13-02"),
        "not a real calendar date",
        11,
    ),
    (
        "date-and-time",
        _sub("created: 2026-12-01", "created: 2026-12-01 10:00:00"),
        "YYYY-MM-DD",
        10,
    ),
    ("date-as-int", _sub("created: 2026-12-01", "created: 20261201"), "YYYY-MM-DD", 10),
    ("date-as-words", _sub("created: 2026-12-01", "created: yesterday"), "YYYY-MM-DD", 10),
    ("date-out-of-range", _sub("created: 2026-12-01", "created: 1900-01-01"), "outside", 10),
    (
        "updated-before-created",
        _sub("updated: 2026-12-02", "updated: 2026-11-02"),
        "before created",
        11,
    ),
    # numbers
    (
        "400-digit-trigger",
        _sub("`ctas_per_sm < 1`", "`ctas_per_sm < " + "9" * 400 + "`"),
        "finite",
        18,
    ),
    (
        "pct-trigger-over-100",
        _sub("`ctas_per_sm < 1`", "`dram_throughput_pct < 150`"),
        "outside 0..100",
        18,
    ),
    (
        "negative-count-trigger",
        _sub("`ctas_per_sm < 1`", "`registers_per_thread > -5`"),
        "outside",
        18,
    ),
    ("exponent-trigger", _sub("`ctas_per_sm < 1`", "`ctas_per_sm < 1e3`"), "metric op number", 18),
    ("unknown-trigger-metric", _sub("`ctas_per_sm < 1`", "`speed < 1`"), "unknown metric", 18),
    ("gain-bool", _sub("expected_gain_pct: 30", "expected_gain_pct: true"), "not a number", 7),
    ("gain-text", _sub("expected_gain_pct: 30", 'expected_gain_pct: "30"'), "not a number", 7),
    ("gain-nan", _sub("expected_gain_pct: 30", "expected_gain_pct: .nan"), "finite", 7),
    ("gain-inf", _sub("expected_gain_pct: 30", "expected_gain_pct: .inf"), "finite", 7),
    ("gain-overflow", _sub("expected_gain_pct: 30", "expected_gain_pct: 1.0e+400"), "finite", 7),
    (
        "gain-exponent-text",
        _sub("expected_gain_pct: 30", "expected_gain_pct: 1e4"),
        "not a number",
        7,
    ),
    (
        "gain-negative",
        _sub("expected_gain_pct: 30", "expected_gain_pct: -5"),
        "greater than or equal",
        7,
    ),
    (
        "gain-huge",
        _sub("expected_gain_pct: 30", "expected_gain_pct: 5000"),
        "less than or equal",
        7,
    ),
    # names
    (
        "name-with-newline",
        _sub("name: sample-opt", 'name: "sample-opt\\n"'),
        "invalid entry name",
        2,
    ),
    ("name-double-dash", _sub("name: sample-opt", "name: sample--opt"), "invalid entry name", 2),
    ("name-reserved", _sub("name: sample-opt", "name: index"), "kept for the site", 2),
    ("name-too-long", _sub("name: sample-opt", "name: " + "a" * 81), "invalid entry name", 2),
    ("name-upper", _sub("name: sample-opt", "name: Sample-Opt"), "invalid entry name", 2),
    ("name-path", _sub("name: sample-opt", "name: ../../etc/passwd"), "invalid entry name", 2),
    ("name-list", _sub("name: sample-opt", "name: [a, b]"), "name", 2),
    ("name-number", _sub("name: sample-opt", "name: 123"), "name", 2),
    (
        "target-not-a-name",
        _sub("## Interactions\n", "## Interactions\n- composes `Bad_Target`: x\n"),
        "not an entry name",
        45,
    ),
    (
        "interacts-with-itself",
        _sub("## Interactions\n", "## Interactions\n- composes `sample-opt`: x\n"),
        "interact with itself",
        44,
    ),
    # YAML
    ("duplicate-key", _sub("risk: low", "risk: low\nrisk: high"), "appears twice", 9),
    (
        "yaml-alias",
        _sub("bottlenecks: [memory]", "bottlenecks: &b [memory]\nx: *b"),
        "anchors or aliases",
        2,
    ),
    (
        "yaml-not-mapping",
        lambda t: ("---\n- a\n- b\n---\n" + t.split("---\n", 2)[2]).encode(),
        "mapping",
        2,
    ),
    ("yaml-syntax", _sub("kind: optimization", "kind: [optimization"), "not valid YAML", None),
    (
        "yaml-unclosed",
        lambda t: t.replace("---\n\n# Sample", "\n# Sample", 1).encode(),
        "not closed",
        1,
    ),
    ("unknown-key", _sub("risk: low", "risk: low\nowner: me"), "unknown front-matter key", 9),
    (
        "applies-to-string",
        _sub("applies_to: [attention-decode]", "applies_to: attention-decode"),
        "applies_to",
        4,
    ),
    ("bottlenecks-empty", _sub("bottlenecks: [memory]", "bottlenecks: []"), "bottlenecks", 5),
    ("impact-unknown", _sub("impact: high", "impact: huge"), "impact", 6),
    (
        "unknown-context",
        _sub("applies_to: [attention-decode]", "applies_to: [toaster]"),
        "unknown context",
        4,
    ),
    # template
    ("empty-file", lambda t: b"", "front matter", 1),
    ("no-front-matter", lambda t: t.split("---\n", 2)[2].encode(), "front matter", 1),
    ("no-title", _sub("# Sample optimization\n", ""), "title", None),
    ("empty-title", _sub("# Sample optimization", "# "), "title", None),
    (
        "section-twice",
        _sub("## Pitfalls", "## Mechanism\nagain\n\n## Pitfalls"),
        "appears twice",
        None,
    ),
    (
        "section-out-of-order",
        _sub(
            "## Mechanism\nSplits the work.\n\n## Affected Metrics",
            "## Affected Metrics\n- `dram_throughput_pct`: rises.\n\n## Mechanism\nSplits the work.\n\n## Affected Metrics-x",
        ),
        "section",
        None,
    ),
    ("unknown-section", _sub("## Pitfalls", "## Notes\nx\n\n## Pitfalls"), "unknown section", None),
    ("fence-unclosed", _sub("x = 1\n```", "x = 1\n"), "fence", None),
    (
        "evidence-no-command",
        _sub("Source type: external report", "Source type: local experiment"),
        "Command",
        None,
    ),
    (
        "evidence-row-cells",
        _sub("| b=1 | 10 us | 5 us | -50% |", "| b=1 | 10 us | -50% |"),
        "cells",
        None,
    ),
    (
        "evidence-header",
        _sub("| Config | Before | After | Change |", "| A | B | C | D |"),
        "header",
        None,
    ),
    ("evidence-no-source", _sub("Source: Some paper (2023), A100\n", ""), "source", None),
    (
        "evidence-impossible-date",
        _sub(
            "Source: Some paper (2023), A100\n",
            "Source: Some paper (2023), A100\nDate: 2026-02-30\n",
        ),
        "not a real calendar date",
        None,
    ),
]

# Inputs an entry file may have that are fine and must be accepted as they are.
ENTRY_ACCEPTED: list[tuple[str, Callable[[str], bytes]]] = [
    ("plain", lambda t: t.encode()),
    ("byte-order-mark", lambda t: b"\xef\xbb\xbf" + t.encode()),
    ("crlf", lambda t: t.replace("\n", "\r\n").encode()),
    ("tabs-in-code", _sub("x = 1", "if x:\n\tx = 1")),
    ("unicode-prose", _sub("Splits the work.", "Splits the wörk — 分割 (µs, ≥ 2×).")),
    ("pct-of-floor-over-100", _sub("`ctas_per_sm < 1`", "`pct_of_floor > 120`")),
]


def _draft(tmp_path: Path, data: bytes) -> Path:
    path = tmp_path / "draft.md"
    path.write_bytes(data)
    return path


def test_an_entry_can_come_from_standard_input(empty_kb: Path) -> None:
    # An agent that drafts in memory need not write a temporary file.
    r = call(empty_kb, "add", "-", stdin=VALID.replace("risk: low", "risk: tiny").encode())
    clean_error(r, "risk", located="<stdin>:8:")
    r = call(empty_kb, "add", "-", "--json", stdin=VALID.encode())
    assert r.rc == 0 and strict_json(r.out)["id"] == "sample-opt", r.both  # type: ignore[index]
    assert (empty_kb / "docs/knowledge/optimizations/sample-opt.md").read_text() == VALID


def test_interaction_with_an_unknown_entry_is_refused_at_its_line(
    empty_kb: Path, tmp_path: Path
) -> None:
    # The entry parses; the store finds the unknown target, and points at its bullet.
    draft = _draft(tmp_path, (VALID + "- requires `no-such-entry-xyz`: needs it\n").encode())
    r = call(empty_kb, "add", str(draft))
    clean_error(
        r, "interaction points at unknown entry 'no-such-entry-xyz'", located=f"{draft}:45:"
    )
    assert not list((empty_kb / "docs" / "knowledge").rglob("*.md")), "nothing may be written"


@pytest.mark.parametrize(
    ("case", "edit", "fragment", "line"), ENTRY_CASES, ids=[c[0] for c in ENTRY_CASES]
)
def test_bad_entry_is_refused_at_its_line(
    empty_kb: Path,
    tmp_path: Path,
    case: str,
    edit: Callable[[str], bytes],
    fragment: str,
    line: int | None,
) -> None:
    draft = _draft(tmp_path, edit(VALID))
    r = call(empty_kb, "add", str(draft))
    clean_error(r, fragment, located=f"{draft}:{line}:" if line else None)
    assert not list((empty_kb / "docs" / "knowledge").rglob("*.md")), "nothing may be written"
    # The agents' write_entry path sees the same problems (text, not a file).
    if case not in {"latin-1", "utf-16", "overlong-utf8", "surrogate-bytes"}:
        from kbopt.errors import KbError
        from kbopt.template import parse_entry

        with pytest.raises(KbError):
            parse_entry(edit(VALID).decode("utf-8-sig"), name=None, path="<draft>")


@pytest.mark.parametrize(("case", "edit"), ENTRY_ACCEPTED, ids=[c[0] for c in ENTRY_ACCEPTED])
def test_good_entry_variants_are_accepted(
    empty_kb: Path, tmp_path: Path, case: str, edit: Callable[[str], bytes]
) -> None:
    r = call(empty_kb, "add", str(_draft(tmp_path, edit(VALID))), "--json")
    assert r.rc == 0, r.both
    assert strict_json(r.out)["id"] == "sample-opt"  # type: ignore[index]
    assert call(empty_kb, "show", "sample-opt", "--json").rc == 0
    assert call(empty_kb, "lint").rc == 0


def test_written_entry_never_splits_a_line(empty_kb: Path) -> None:
    """Through the library, fields that would break the file are refused before writing."""
    from kbopt import KbError, Store, parse_entry

    store = Store(empty_kb)
    entry = parse_entry(VALID, name="sample-opt")
    for field, value in (
        ("title", "A title\n## Mechanism"),
        ("contexts", ["ok", "two\nlines"]),
        ("pitfalls", ["nul \x00 inside"]),
        ("contexts", ["  "]),
    ):
        with pytest.raises((KbError, ValueError)):
            store.write(entry.model_copy(update={field: value}))
            # model_copy does not validate: the store's re-parse must catch it
    assert not list((empty_kb / "docs" / "knowledge").rglob("*.md"))


# --------------------------------------------------------------------------- input files


def _make_socket(path: Path) -> None:
    """A Unix socket file at `path` (bound by its short name: socket paths are limited
    to about 100 characters, and pytest's temporary folders are long)."""
    here = os.getcwd()
    os.chdir(path.parent)
    try:
        s = socket.socket(socket.AF_UNIX)
        s.bind(path.name)
        s.close()
    finally:
        os.chdir(here)


def _special(tmp_path: Path, kind: str) -> str:
    if kind == "fifo":
        path = tmp_path / "pipe.md"
        os.mkfifo(path)
        return str(path)
    if kind == "folder":
        path = tmp_path / "folder.md"
        path.mkdir()
        return str(path)
    if kind == "device":
        return "/dev/null"
    if kind == "socket":
        path = tmp_path / "sock.md"
        _make_socket(path)
        return str(path)
    if kind == "missing":
        return str(tmp_path / "nope.md")
    if kind == "huge":
        path = tmp_path / "huge.md"
        with path.open("wb") as fh:
            fh.truncate(9 * 1024 * 1024)
        return str(path)
    raise AssertionError(kind)


SPECIAL_FILES = [
    ("fifo", "FIFO"),
    ("folder", "folder"),
    ("device", "device"),
    ("socket", "socket"),
    ("missing", "cannot read"),
    ("huge", "limit"),
]


@pytest.mark.parametrize(("kind", "fragment"), SPECIAL_FILES, ids=[k for k, _ in SPECIAL_FILES])
@pytest.mark.parametrize("command", ["add", "recommend", "autopilot"])
def test_special_files_are_refused_without_reading(
    empty_kb: Path, tmp_path: Path, kind: str, fragment: str, command: str
) -> None:
    path = _special(tmp_path, kind)
    argv = {
        "add": ["add", path],
        "recommend": ["recommend", path],
        "autopilot": ["agent", "autopilot", path, "--dry-run"],
    }[command]
    clean_error(call(empty_kb, *argv), fragment)


# --------------------------------------------------------------------------- profiles

PROFILE = """## Profile: k v1 | b=1
### Stages
| Stage | Duration | TC% | DRAM% | Occ% | Bottleneck | Key Issue |
|-------|----------|-----|-------|------|------------|-----------|
| main | 10 us | 10% | 40% | 20% | Memory | few CTAs |
### Metrics
| Metric | Value |
|--------|-------|
| ctas_per_sm | 0.5 |
"""

PROFILE_CASES: list[tuple[str, Callable[[str], bytes], str]] = [
    ("latin-1", lambda t: t.replace("few CTAs", "peu de CTAs é").encode("latin-1"), "not UTF-8"),
    (
        "trailing-garbage",
        _sub("| ctas_per_sm | 0.5 |", "| ctas_per_sm | 12abc |"),
        "expected a number",
    ),
    ("decimal-comma", _sub("| ctas_per_sm | 0.5 |", "| ctas_per_sm | 0,24 |"), "use a point"),
    ("overflow", _sub("| ctas_per_sm | 0.5 |", "| ctas_per_sm | 1e999 |"), "finite"),
    ("nan", _sub("| ctas_per_sm | 0.5 |", "| ctas_per_sm | nan |"), "expected a number"),
    ("inf", _sub("| ctas_per_sm | 0.5 |", "| ctas_per_sm | inf |"), "expected a number"),
    (
        "minus-inf",
        _sub("| ctas_per_sm | 0.5 |", "| ctas_per_sm | -Infinity |"),
        "expected a number",
    ),
    ("negative-count", _sub("| ctas_per_sm | 0.5 |", "| registers_per_thread | -3 |"), "outside"),
    (
        "pct-metric-over-100",
        _sub("| ctas_per_sm | 0.5 |", "| l2_hit_rate_pct | 150 |"),
        "outside 0..100",
    ),
    ("wrong-unit", _sub("| ctas_per_sm | 0.5 |", "| duration_us | 5 ms |"), "expected a number"),
    ("empty-value", _sub("| ctas_per_sm | 0.5 |", "| ctas_per_sm |  |"), "expected a number"),
    ("duplicate-metric", lambda t: (t + "| ctas_per_sm | 0.7 |\n").encode(), "listed twice"),
    (
        "duplicate-via-ncu-name",
        lambda t: (
            t + "| launch__registers_per_thread | 96 |\n| registers_per_thread | 64 |\n"
        ).encode(),
        "listed twice",
    ),
    ("unknown-metric", _sub("| ctas_per_sm | 0.5 |", "| speed | 3 |"), "unknown metric"),
    ("negative-duration", _sub("| 10 us |", "| -10 us |"), ">= 0"),
    ("duration-overflow", _sub("| 10 us |", "| 1e999 us |"), "finite"),
    ("occupancy-150", _sub("| 20% |", "| 150% |"), "outside 0..100"),
    ("dram-negative", _sub("| 40% |", "| -1% |"), "outside 0..100"),
    (
        "duplicate-stage",
        _sub(
            "| main | 10 us | 10% | 40% | 20% | Memory | few CTAs |",
            "| main | 10 us | 10% | 40% | 20% | Memory | a |\n| main | 5 us | 10% | 40% | 20% | Memory | b |",
        ),
        "listed twice",
    ),
    (
        "stage-cells",
        _sub("| main | 10 us | 10% | 40% | 20% | Memory | few CTAs |", "| main | 10 us |"),
        "cells",
    ),
    ("stage-columns", _sub("| Stage | Duration |", "| Stage | Time |"), "columns"),
    ("title-nan", _sub("| b=1", "| b=nan"), "dim=number"),
    ("title-overflow", _sub("| b=1", "| b=1e999"), "finite"),
    ("title-duplicate-dim", _sub("| b=1", "| b=1, b=2"), "given twice"),
    ("title-garbage", _sub("| b=1", "| b=12abc"), "dim=number"),
    ("title-catalog-metric-out-of-range", _sub("| b=1", "| batch=-4"), "outside"),
    ("no-title", lambda t: t.split("\n", 1)[1].encode(), "starts with"),
    ("empty", lambda t: b"", "the profile is empty"),
    ("blank-lines-only", lambda t: b"\n  \n\n", "the profile is empty"),
    ("comment-only", lambda t: b"<!-- device: H200 -->\n", "starts with"),
    ("two-profiles", lambda t: (t + "## Profile: k v2\n").encode(), "one profile per document"),
    ("nul", _sub("few CTAs", "few\x00CTAs"), "control character"),
    (
        "gain-overflow",
        lambda t: (
            t
            + "### Top 3 Opportunities (ranked by estimated impact)\n1. X -- est. "
            + "9" * 400
            + "% gain\n"
        ).encode(),
        "plausible",
    ),
    (
        "bottleneck-unknown",
        lambda t: (t + "### Bottleneck: Toaster-bound\n").encode(),
        "not Memory",
    ),
    (
        "metrics-header-only",
        lambda t: t.split("|--------|")[0].encode(),
        "Metrics table has no rows",
    ),
    (
        "stages-header-and-separator-only",
        _sub("| main | 10 us | 10% | 40% | 20% | Memory | few CTAs |\n", ""),
        "Stages table has no rows",
    ),
    (
        "no-metrics-at-all",
        lambda t: b"## Profile: k v1 | b=1\n### Bottleneck: Memory-bound\nRoot cause: x.\n",
        "gives no metrics",
    ),
]

PROFILE_ACCEPTED: list[tuple[str, Callable[[str], bytes], dict[str, float]]] = [
    ("plain", lambda t: t.encode(), {"ctas_per_sm": 0.5}),
    (
        "thousands-separator",
        _sub("| ctas_per_sm | 0.5 |", "| registers_per_thread | 1,024 |"),
        {"registers_per_thread": 1024.0},
    ),
    (
        "unit-in-cell",
        _sub("| ctas_per_sm | 0.5 |", "| dram_throughput_pct | 41 % |"),
        {"dram_throughput_pct": 41.0},
    ),
    (
        "pct-of-floor-over-100",
        _sub("| ctas_per_sm | 0.5 |", "| pct_of_floor | 104 |"),
        {"pct_of_floor": 104.0},
    ),
    ("crlf", lambda t: t.replace("\n", "\r\n").encode(), {"ctas_per_sm": 0.5}),
]


@pytest.mark.parametrize(
    ("case", "edit", "fragment"), PROFILE_CASES, ids=[c[0] for c in PROFILE_CASES]
)
def test_bad_profile_is_refused_with_valid_json(
    empty_kb: Path, tmp_path: Path, case: str, edit: Callable[[str], bytes], fragment: str
) -> None:
    path = tmp_path / "profile.md"
    path.write_bytes(edit(PROFILE))
    errors = json_error(call(empty_kb, "recommend", str(path), "--json"), fragment)
    assert all(e.startswith(f"{path}:") for e in errors), errors
    clean_error(call(empty_kb, "recommend", str(path)), fragment, located=f"{path}:")


def test_partial_profile_is_ranked_with_a_warning(empty_kb: Path, tmp_path: Path) -> None:
    path = tmp_path / "profile.md"
    path.write_text(PROFILE)  # Stages and Metrics, no Bottleneck section
    warning = (
        f"kbopt: warning: {path}: no `### Bottleneck` section: the ranking rests on 5 metrics only"
    )
    r = call(empty_kb, "recommend", str(path))
    assert r.rc == 0 and warning in r.err.splitlines(), r.both
    r = call(empty_kb, "recommend", str(path), "--json")
    assert r.rc == 0 and warning.removeprefix("kbopt: warning: ") in strict_json(r.out)["note"]  # type: ignore[index]
    analysis = tmp_path / "analysis.md"
    analysis.write_text("Primary bottleneck: memory-bound\nEvidence: stuff\n")
    r = call(empty_kb, "recommend", str(analysis))
    assert r.rc == 0 and "no number in the Evidence line names a metric" in r.err, r.both


@pytest.mark.parametrize(
    ("case", "edit", "metrics"), PROFILE_ACCEPTED, ids=[c[0] for c in PROFILE_ACCEPTED]
)
def test_good_profile_variants_are_accepted(
    empty_kb: Path,
    tmp_path: Path,
    case: str,
    edit: Callable[[str], bytes],
    metrics: dict[str, float],
) -> None:
    path = tmp_path / "profile.md"
    path.write_bytes(edit(PROFILE))
    r = call(empty_kb, "recommend", str(path), "--json")
    assert r.rc == 0, r.both
    got = strict_json(r.out)["metrics"]  # type: ignore[index]
    assert metrics.items() <= got.items()


def test_profile_from_stdin_is_checked_like_a_file(empty_kb: Path) -> None:
    r = call(
        empty_kb, "recommend", "-", "--json", stdin=PROFILE.replace("few", "é").encode("latin-1")
    )
    json_error(r, "not UTF-8")
    r = call(empty_kb, "recommend", "-", "--json", stdin=PROFILE.encode())
    assert r.rc == 0 and strict_json(r.out)


def test_library_profile_refuses_non_finite_values() -> None:
    from pydantic import ValidationError

    from kbopt.contracts.profile import Profile, Stage

    for bad in (
        {"measured": {"ctas_per_sm": float("nan")}},
        {"measured": {"achieved_occupancy_pct": 150.0}},
        {"config": {"b": float("inf")}},
    ):
        with pytest.raises(ValidationError):
            Profile(kernel="k", **bad)  # type: ignore[arg-type]
    with pytest.raises(ValidationError):
        Stage(name="s", duration_us=-1.0)


# --------------------------------------------------------------------------- analyses

ANALYSIS = "Primary bottleneck: memory-bound\nEvidence: Memory bandwidth at 40% of peak\nRecommendations:\n1. [High] Split the KV cache\n"

ANALYSIS_CASES: list[tuple[str, Callable[[str], bytes], str, int]] = [
    (
        "empty-bottleneck",
        _sub("Primary bottleneck: memory-bound", "Primary bottleneck:"),
        "is empty",
        1,
    ),
    (
        "unknown-bottleneck",
        _sub("memory-bound", "fast-bound"),
        "unknown bottleneck 'fast-bound'",
        1,
    ),
    (
        "bottleneck-twice",
        lambda t: (t + "Primary bottleneck: compute-bound\n").encode(),
        "appears twice",
        5,
    ),
    ("evidence-out-of-range", _sub("at 40% of peak", "at 140% of peak"), "outside 0..100", 2),
    ("bad-recommendation", _sub("1. [High]", "1. [Urgent]"), "recommendation reads", 4),
    (
        "recommendations-inline",
        _sub("Recommendations:", "Recommendations: do it"),
        "numbered lines",
        3,
    ),
    ("stray-text", lambda t: ("hello\n" + t).encode(), "expected", 1),
    (
        "a-profile-instead",
        lambda t: b"<!-- device: H200 -->\n## Profile: k v1\n### Stages\n| a | b |\n",
        "this is a profile",
        2,
    ),
    ("latin-1", lambda t: t.replace("Split", "Séparer").encode("latin-1"), "not UTF-8", 4),
]


@pytest.mark.parametrize(
    ("case", "edit", "fragment", "line"), ANALYSIS_CASES, ids=[c[0] for c in ANALYSIS_CASES]
)
def test_bad_analysis_is_refused(
    empty_kb: Path,
    tmp_path: Path,
    case: str,
    edit: Callable[[str], bytes],
    fragment: str,
    line: int,
) -> None:
    path = tmp_path / "analysis.md"
    path.write_bytes(edit(ANALYSIS))
    clean_error(
        call(empty_kb, "agent", "autopilot", str(path), "--dry-run"),
        fragment,
        located=f"{path}:{line}:",
    )
    if case not in ("stray-text", "a-profile-instead"):  # recommend tells them by the first line
        json_error(call(empty_kb, "recommend", str(path), "--json"), fragment)


def test_good_analysis_is_accepted(empty_kb: Path, tmp_path: Path) -> None:
    path = tmp_path / "analysis.md"
    path.write_text(ANALYSIS)
    r = call(empty_kb, "recommend", str(path), "--json")
    assert r.rc == 0, r.both
    assert strict_json(r.out)["metrics"] == {"dram_throughput_pct": 40.0}  # type: ignore[index]


# --------------------------------------------------------------------------- arguments

ARGUMENT_CASES: list[tuple[str, list[str], str]] = [
    ("limit-zero", ["search", "x", "--limit", "0"], "not a count"),
    ("limit-negative", ["search", "x", "--limit", "-3"], "not a count"),
    ("limit-text", ["search", "x", "--limit", "ten"], "not a count"),
    ("limit-huge", ["recommend", "p.md", "--limit", "99999999999"], "not a count"),
    ("sm-negative", ["agent", "route", "Write a kernel", "--sm", "-1"], "SM version"),
    ("sm-huge", ["agent", "route", "Write a kernel", "--sm", "5000"], "SM version"),
    ("sm-text", ["agent", "route", "Write a kernel", "--sm", "hopper"], "SM version"),
    ("max-turns-zero", ["agent", "run", "x", "--dry-run", "--max-turns", "0"], "positive integer"),
    ("timeout-zero", ["--timeout", "0", "list"], "more than 0"),
    (
        "timeout-before-and-after",
        ["--timeout", "1", "list", "--timeout", "100"],
        "--timeout given both before list (1 s) and after it (100 s)",
    ),
    (
        "search-scope-contradicts-language",
        ["search", "split", "--scope", "language", "--language", "shared"],
        "contradict",
    ),
    (
        "search-shared-scope-with-a-language",
        ["search", "split", "--scope", "shared", "--language", "triton"],
        "contradict",
    ),
    ("timeout-nan", ["--timeout", "nan", "list"], "seconds"),
    ("timeout-negative", ["--timeout", "-5", "list"], "seconds"),
    ("show-name-newline", ["show", "sample-opt\n"], "invalid entry name"),
    ("show-name-path", ["show", "../../etc/passwd"], "invalid entry name"),
    ("new-double-dash", ["new", "optimization", "a--b"], "invalid entry name"),
    ("new-reserved", ["new", "optimization", "index"], "kept for the site"),
    ("new-upper", ["new", "anti-pattern", "Bad"], "invalid entry name"),
    ("new-unknown-kind", ["new", "trick", "a-b"], "invalid choice"),
    (
        "tool-input-not-json",
        ["agent", "tool", "show_entry", "--role", "orchestrator", "--input", "{"],
        "not JSON",
    ),
    (
        "tool-unknown",
        ["agent", "tool", "rm_rf", "--role", "orchestrator", "--input", "{}"],
        "unknown tool",
    ),
    ("tool-no-role", ["agent", "tool", "show_entry", "--input", "{}"], "--role"),
    (
        "tool-unknown-role",
        ["agent", "tool", "show_entry", "--role", "root", "--input", "{}"],
        "invalid choice",
    ),
    ("autopilot-missing", ["agent", "autopilot", "nope.md", "--dry-run"], "cannot read"),
    (
        "route-to-unknown",
        ["agent", "route", "Write a Triton kernel", "--to", "kernel-cuda-specialist"],
        "unknown delegate",
    ),
    ("list-unknown-language", ["list", "--language", "cobol"], "unknown language"),
    ("profile-budget-nan", ["profile", "k", "v1", "--budget-s", "nan"], "positive number"),
    ("tune-budget-negative", ["tune", "k", "v1", "--budget-min", "-5"], "positive number"),
    ("tune-seconds-zero", ["tune", "k", "v1", "--seconds-per-config", "0"], "positive number"),
    ("bench-rep-ms-negative", ["bench", "k", "--rep-ms", "-1"], "positive integer"),
    ("site-port-out-of-range", ["site", "serve", "--port", "99999"], "TCP port"),
    ("site-jobs-zero", ["site", "build", "-j", "0"], "not a count"),
    ("cycle-max-iterations-zero", ["cycle", "k", "--max-iterations", "0"], "positive integer"),
    (
        "read-timeout-zero",
        ["agent", "run", "x", "--dry-run", "--read-timeout", "0"],
        "positive number",
    ),
    # A dry run refuses what the real run would.
    (
        "dry-run-bad-price",
        ["agent", "run", "x", "--sm", "90", "--dry-run", "--price", "bogus"],
        "--price: expected",
    ),
    (
        "dry-run-negative-price",
        ["agent", "run", "x", "--sm", "90", "--dry-run", "--price", "m=-1,2"],
        "numbers >= 0",
    ),
    (
        "dry-run-empty-model",
        ["agent", "run", "x", "--sm", "90", "--dry-run", "--model", ""],
        "not a model id",
    ),
]


@pytest.mark.parametrize(
    ("case", "argv", "fragment"), ARGUMENT_CASES, ids=[c[0] for c in ARGUMENT_CASES]
)
def test_bad_argument_is_refused(empty_kb: Path, case: str, argv: list[str], fragment: str) -> None:
    clean_error(call(empty_kb, *argv), fragment)


def test_recommend_refuses_fill_with_json(empty_kb: Path) -> None:
    """--fill prints Markdown, --json prints JSON: together, one is not silently dropped."""
    r = call(empty_kb, "recommend", "p.md", "--fill", "--json")
    assert r.rc == 2 and "Traceback" not in r.both
    assert "choose one" in json.loads(r.out)["error"][0]


def test_json_before_the_command_says_where_it_goes(empty_kb: Path) -> None:
    r = call(empty_kb, "--json", "list")
    assert r.rc == 2 and "Traceback" not in r.both
    assert "put it after the command" in json.loads(r.out)["error"][0]


def test_bad_root_is_refused(tmp_path: Path) -> None:
    clean_error(call(tmp_path / "nowhere", "list"), "no such folder")
    (tmp_path / "file").write_text("x")
    clean_error(call(tmp_path / "file", "lint"), "not a folder")


def test_a_kbopt_root_that_does_not_exist_is_refused_not_created(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """As `--root`: a typo in KBOPT_ROOT must not create a project there (a write command
    made the folder and wrote the entry into it) nor quietly answer from the bundled
    entries alone."""
    nowhere = tmp_path / "nowhere"
    monkeypatch.setenv("KBOPT_ROOT", str(nowhere))
    for argv in (["new", "optimization", "zz-top"], ["list"], ["search", "split"]):
        clean_error(call(None, *argv), "no such folder")
    assert not nowhere.exists()


def test_bad_lock_timeout_setting_is_refused(
    empty_kb: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("KBOPT_LOCK_TIMEOUT", "soon")
    clean_error(call(empty_kb, "add", str(_draft(tmp_path, VALID.encode()))), "KBOPT_LOCK_TIMEOUT")


def test_tool_input_that_is_not_an_object_is_a_tool_error(empty_kb: Path) -> None:
    r = call(
        empty_kb,
        "agent",
        "tool",
        "show_entry",
        "--role",
        "orchestrator",
        "--input",
        "[1]",
        "--json",
    )
    assert r.rc == 1 and "Traceback" not in r.both
    data = strict_json(r.out)
    assert data == {"ok": False, "result": data["result"], "error": [data["result"]]}  # type: ignore[index]


# --------------------------------------------------------------------------- the knowledge base's own files


def _odd(kdir: Path, kind: str, tmp_path: Path) -> tuple[Path, str]:
    folder = kdir / "optimizations"
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / "odd-one.md"
    if kind == "link-out":
        outside = tmp_path / "outside.md"
        outside.write_text(VALID.replace("sample-opt", "odd-one"))
        path.symlink_to(outside)
        return path, "outside the knowledge base"
    if kind == "link-to-etc":
        path.symlink_to("/etc/passwd")
        return path, "outside the knowledge base"
    if kind == "broken-link":
        path.symlink_to(folder / "nothing.md")
        return path, "link to nothing"
    if kind == "link-loop":
        path.symlink_to(path)
        return path, "link to nothing"
    if kind == "fifo":
        os.mkfifo(path)
        return path, "FIFO"
    if kind == "folder":
        path.mkdir()
        return path, "folder"
    if kind == "socket":
        _make_socket(path)
        return path, "socket"
    if kind == "folder-link":
        link = folder / "elsewhere"
        link.symlink_to(tmp_path)
        return link, "not followed"
    if kind == "latin-1":
        path.write_bytes(
            VALID.replace("sample-opt", "odd-one").replace("Splits", "Sépare").encode("latin-1")
        )
        return path, "not UTF-8"
    if kind == "newline-name":
        odd = folder / "odd-one\n.md"
        odd.write_text(VALID.replace("sample-opt", "odd-one"))
        return odd, "control character"
    if kind == "bad-date":
        path.write_text(VALID.replace("sample-opt", "odd-one").replace("2026-12-01", "2026-02-30"))
        return path, "not a real calendar date"
    raise AssertionError(kind)


ODD_FILES = [
    "link-out",
    "link-to-etc",
    "broken-link",
    "link-loop",
    "fifo",
    "folder",
    "socket",
    "folder-link",
    "latin-1",
    "bad-date",
    "newline-name",
]


@pytest.mark.parametrize("kind", ODD_FILES)
def test_odd_file_in_the_knowledge_base_is_reported_never_read(
    empty_kb: Path, tmp_path: Path, kind: str
) -> None:
    kdir = empty_kb / "docs" / "knowledge"
    good = kdir / "optimizations" / "sample-opt.md"
    good.parent.mkdir(parents=True)
    good.write_text(VALID)
    odd, fragment = _odd(kdir, kind, tmp_path)
    shown = repr(str(odd.relative_to(empty_kb)))[1:-1]  # a control character shown escaped

    r = call(empty_kb, "lint", "--json")
    assert r.rc == 1 and "Traceback" not in r.both, r.both
    problems = strict_json(r.out)["problems"]  # type: ignore[index]
    assert any(p.startswith(f"{shown}:") and fragment in p for p in problems), problems

    r = call(empty_kb, "list", "--json")
    assert r.rc == 0, r.both
    assert [row["id"] for row in strict_json(r.out)] == ["sample-opt"]  # type: ignore[union-attr]
    assert fragment in r.err

    assert call(empty_kb, "show", "sample-opt", "--json").rc == 0
    # A regular file that does not parse is an entry with problems; anything else is no entry.
    readable = kind in ("latin-1", "bad-date")
    clean_error(call(empty_kb, "show", "odd-one"), fragment if readable else "no entry named")
    # catalog/ is written without it, and says so (CI's `catalog --check` fails on it).
    r = call(empty_kb, "catalog")
    assert r.rc == 1 and "Traceback" not in r.both and fragment in r.err, r.both
    r = call(empty_kb, "catalog", "--check")
    assert r.rc == 1 and fragment in r.err, r.both


def test_lock_that_cannot_be_taken_names_its_holder(
    empty_kb: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import multiprocessing as mp

    from kbopt import Store

    ready, release = mp.Event(), mp.Event()

    def hold() -> None:
        with Store(empty_kb).locked():
            ready.set()
            release.wait(30)

    holder = mp.get_context("fork").Process(target=hold)
    holder.start()
    try:
        assert ready.wait(10)
        monkeypatch.setenv("KBOPT_LOCK_TIMEOUT", "0.3")
        r = call(empty_kb, "add", str(_draft(tmp_path, VALID.encode())))
        clean_error(r, f"locked by process {holder.pid}")
        assert "KBOPT_LOCK_TIMEOUT" in r.err
    finally:
        release.set()
        holder.join(10)
    assert call(empty_kb, "add", str(_draft(tmp_path, VALID.encode()))).rc == 0


def test_lock_path_that_is_not_a_file_is_refused(empty_kb: Path, tmp_path: Path) -> None:
    (empty_kb / "docs" / "knowledge" / ".kbopt.lock").mkdir()
    clean_error(call(empty_kb, "add", str(_draft(tmp_path, VALID.encode()))), "not the lock file")


@pytest.mark.parametrize("where", ["before", "after"])
def test_timeout_stops_any_command(empty_kb: Path, tmp_path: Path, where: str) -> None:
    from kbopt import Store

    draft = str(_draft(tmp_path, VALID.encode()))
    argv = (
        ["--timeout", "1", "add", draft] if where == "before" else ["add", draft, "--timeout", "1"]
    )
    fifo_lock = Store(empty_kb)
    with fifo_lock.locked():  # held by this process: a second taker waits
        import subprocess
        import sys

        r = subprocess.run(
            [sys.executable, "-m", "kbopt", "--root", str(empty_kb), *argv],
            capture_output=True,
            text=True,
            timeout=60,
            env={**os.environ, "KBOPT_LOCK_TIMEOUT": "50"},
        )
    assert r.returncode == 124, r.stderr
    assert "gave up after 1 s (--timeout)" in r.stderr and "Traceback" not in r.stderr


def test_a_huge_request_routes_in_linear_time(empty_kb: Path) -> None:
    r = call(
        empty_kb, "agent", "route", "x" * 200_000 + ".py", "--sm", "90", "--json"
    )  # under the deadline
    assert r.rc == 0 and strict_json(r.out)["rule"] == "ampere-hopper"  # type: ignore[index]


def test_tool_validation_errors_are_one_line(empty_kb: Path, tmp_path: Path) -> None:
    draft = _draft(tmp_path, VALID.encode())
    assert call(empty_kb, "add", str(draft)).rc == 0
    for tool, inp in (
        ("narrow_conditions", '{"name": "sample-opt", "contexts": ["two\\nlines"]}'),
        (
            "add_interaction",
            '{"name": "sample-opt", "relation": "composes", "target": "sample-opt"}',
        ),
        (
            "record_evidence",
            '{"name": "sample-opt", "source_type": "external report", "source": "a\\nb", "rows": [{"config": "a", "before": "b", "after": "c", "change": "d"}]}',
        ),
    ):
        r = call(empty_kb, "agent", "tool", tool, "--role", "orchestrator", "--input", inp)
        assert r.rc == 1 and len(r.err.strip().splitlines()) == 1 and "pydantic" not in r.err, r.err
    r = call(
        empty_kb,
        "agent",
        "tool",
        "read_file",
        "--role",
        "profiler",
        "--input",
        '{"path": "a\\u0000b"}',
    )
    assert r.rc == 1 and "control character" in r.err


@pytest.mark.parametrize(
    ("case", "argv", "fragment"), ARGUMENT_CASES, ids=[c[0] for c in ARGUMENT_CASES]
)
def test_bad_argument_under_json_is_a_json_error(
    empty_kb: Path, case: str, argv: list[str], fragment: str
) -> None:
    """An agent that asked for --json gets JSON back, even for a usage error."""
    errors = json_error(call(empty_kb, *argv, "--json"), "")
    assert errors and all(isinstance(e, str) and e for e in errors)


def test_no_write_goes_through_a_link_out_of_the_knowledge_base(
    empty_kb: Path, tmp_path: Path
) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    (empty_kb / "docs" / "knowledge" / "optimizations").symlink_to(outside)
    clean_error(
        call(empty_kb, "add", str(_draft(tmp_path, VALID.encode()))),
        "leads out of the knowledge base",
    )
    clean_error(
        call(empty_kb, "new", "optimization", "fresh-idea"), "leads out of the knowledge base"
    )
    assert list(outside.iterdir()) == []


def test_a_lock_link_never_truncates_its_target(empty_kb: Path, tmp_path: Path) -> None:
    precious = tmp_path / "precious.txt"
    precious.write_text("keep me\n")
    (empty_kb / "docs" / "knowledge" / ".kbopt.lock").symlink_to(precious)
    clean_error(call(empty_kb, "add", str(_draft(tmp_path, VALID.encode()))), "not the lock file")
    assert precious.read_text() == "keep me\n"


def test_the_lock_owner_note_is_replaced_not_written_through(
    empty_kb: Path, tmp_path: Path
) -> None:
    precious = tmp_path / "precious.txt"
    precious.write_text("keep me\n")
    (empty_kb / "docs" / "knowledge" / ".kbopt.lock.owner").symlink_to(precious)
    assert call(empty_kb, "add", str(_draft(tmp_path, VALID.encode()))).rc == 0
    assert precious.read_text() == "keep me\n"


@pytest.mark.parametrize(
    ("tool", "role", "inp", "fragment"),
    [
        (
            "update_devlog",
            "profiler",
            {"kernel": "k", "section": "entry", "text": "x", "heading": "v2\n## Overview"},
            "one line",
        ),
        (
            "run_tests",
            "perf-profiling-specialist",
            {"path": "tests", "keyword": "a\nb"},
            "one line",
        ),
        ("search_catalog", "profiler", {"query": "split\u001b[2J"}, "control character"),
        (
            "delegate",
            "orchestrator",
            {"specialist": "kernel-triton-specialist", "task": "Write\u0000"},
            "control character",
        ),
    ],
)
def test_tool_inputs_refuse_control_characters_and_split_lines(
    empty_kb: Path, tool: str, role: str, inp: dict[str, object], fragment: str
) -> None:
    import json as _json

    r = call(empty_kb, "agent", "tool", tool, "--role", role, "--input", _json.dumps(inp), "--json")
    assert r.rc == 1 and "Traceback" not in r.both
    data = strict_json(r.out)
    assert data["ok"] is False and fragment in str(data["result"])  # type: ignore[index]
