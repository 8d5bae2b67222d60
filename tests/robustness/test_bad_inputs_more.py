"""More bad inputs, beyond test_bad_inputs.py: kernel configurations on the command line,
spec files that fail at import, whoosh queries with an empty field, profiles with a
section given twice.  Each is refused with its file and line (or the option), exit 2,
never a traceback, never silent acceptance."""

from __future__ import annotations

from pathlib import Path

import pytest

from kbopt.kernel import clear_cache
from tests.robustness.harness import call, clean_error, json_error


@pytest.fixture
def kernel_kb(empty_kb: Path) -> Path:
    """A project with one scaffolded kernel, `sm` (dims rows, cols)."""
    r = call(empty_kb, "kernel", "new", "sm", "--dims", "rows,cols")
    assert r.rc == 0, r.both
    clear_cache()
    return empty_kb


# --------------------------------------------------------------------------- --config

CONFIG_CASES: list[tuple[str, list[str], str]] = [
    (
        "bench-dim-twice",
        ["bench", "sm", "--no-write", "--config", "rows=4,rows=8"],
        "rows is given twice",
    ),
    (
        "profile-dim-twice",
        ["profile", "sm", "triton_v1", "--no-devlog", "--config", "rows=4, rows=8"],
        "given twice",
    ),
    (
        "profile-dim-huge",
        ["profile", "sm", "triton_v1", "--no-devlog", "--config", "rows=" + "9" * 23],
        "above 1e+15",
    ),
    (
        "ablate-dim-huge",
        ["ablate", "sm", "--trials", "3", "--config", "rows=" + "9" * 23],
        "above 1e+15",
    ),
    (
        "bench-dim-5000-digits",
        ["bench", "sm", "--no-write", "--config", "rows=" + "9" * 5000],
        "above 1e+15",
    ),
    (
        "bench-dim-non-ascii-digit",
        ["bench", "sm", "--no-write", "--config", "rows=\u0663"],
        "not a positive integer",
    ),
    (
        "profile-empty-item",
        ["profile", "sm", "triton_v1", "--no-devlog", "--config", "rows=4,,cols=8"],
        "configuration 'rows=4,,cols=8' has an empty item",
    ),
    (
        "bench-trailing-comma",
        ["bench", "sm", "--no-write", "--config", "rows=4,cols=8,"],
        "has an empty item",
    ),
    (
        "tune-manual-empty-item",
        ["tune", "sm", "triton_v1", "--manual", "num_warps=4,,block_size=1024"],
        "--manual 'num_warps=4,,block_size=1024' has an empty item",
    ),
    (
        "tune-manual-commas-alone",
        ["tune", "sm", "triton_v1", "--manual", " , "],
        "--manual ' , ' names no NAME=VALUE item",
    ),
    (
        "tune-param-empty-item",
        ["tune", "sm", "triton_v1", "--manual", "num_warps=4", "--param", "num_warps=4,,8"],
        "num_warps: '4,,8' has an empty item",
    ),
    (
        "bench-versions-empty-item",
        ["bench", "sm", "--no-write", "--versions", "triton_v1,"],
        "--versions 'triton_v1,' has an empty item",
    ),
    (
        "ablate-arms-empty-item",
        ["ablate", "sm", "--trials", "3", "--arms", "catalog,,grid"],
        "--arms 'catalog,,grid' has an empty item",
    ),
    (
        "bench-version-twice",
        ["bench", "sm", "--no-write", "--versions", "triton_v1,triton_v1"],
        "triton_v1 given twice",
    ),
    (
        "bench-versions-name-none",
        ["bench", "sm", "--no-write", "--versions", " , "],
        "names no version",
    ),
]


@pytest.mark.parametrize(
    ("case", "argv", "fragment"), CONFIG_CASES, ids=[c[0] for c in CONFIG_CASES]
)
def test_bad_config_is_refused(kernel_kb: Path, case: str, argv: list[str], fragment: str) -> None:
    clean_error(call(kernel_kb, *argv, "--backend", "fake"), fragment)
    json_error(call(kernel_kb, *argv, "--backend", "fake", "--json"), fragment)


def test_config_with_leading_zeros_is_still_a_number(kernel_kb: Path) -> None:
    r = call(
        kernel_kb,
        "bench",
        "sm",
        "--no-write",
        "--backend",
        "fake",
        "--config",
        "rows=" + "0" * 20 + "4",
    )
    assert r.rc == 0, r.both


# --------------------------------------------------------------------------- spec import

SPEC_CASES: list[tuple[str, str, str, int]] = [
    ("raises", "import os\n\nraise RuntimeError('boom')\n", "RuntimeError: boom", 3),
    ("syntax-error", "X = 1\ndef f(:\n", "SyntaxError", 2),
    ("sys-exit", "import sys\nsys.exit(3)\n", "SystemExit: 3", 2),
]


@pytest.mark.parametrize(
    ("case", "source", "fragment", "line"), SPEC_CASES, ids=[c[0] for c in SPEC_CASES]
)
def test_spec_failing_at_import_names_its_line(
    empty_kb: Path, tmp_path: Path, case: str, source: str, fragment: str, line: int
) -> None:
    folder = tmp_path / f"bad_{case.replace('-', '_')}"
    folder.mkdir()
    (folder / "__init__.py").write_text("")
    spec = folder / "spec.py"
    spec.write_text(source)
    clean_error(call(empty_kb, "kernel", "check", str(folder)), fragment, located=f"{spec}:{line}:")
    errors = json_error(call(empty_kb, "kernel", "check", str(spec), "--json"), fragment)
    assert errors[0].startswith(f"{spec}:{line}: "), errors


# --------------------------------------------------------------------------- search

EMPTY_FIELD_QUERIES = ["kind:", "split kind:", "kind: optimization", "(kind:)"]


@pytest.mark.parametrize("query", EMPTY_FIELD_QUERIES)
def test_query_field_without_value_is_refused(empty_kb: Path, query: str) -> None:
    call(empty_kb, "search", "split")  # builds the index (a note on stderr) first
    clean_error(call(empty_kb, "search", query), "field 'kind' has no value")
    json_error(call(empty_kb, "search", query, "--json"), "has no value")


def test_query_field_with_value_still_works(empty_kb: Path) -> None:
    r = call(empty_kb, "search", "split kind:optimization", "--json")
    assert r.rc == 0, r.both


UNBALANCED_QUERIES = [
    ("(split", "unbalanced ("),
    ("split)", "unbalanced )"),
    (")split(", "unbalanced )"),
    ("split AND", "AND in query 'split AND' has no term on its right"),
    ("OR split", "OR in query 'OR split' has no term on its left"),
    ("(split OR) tile", "OR in query '(split OR) tile' has no term on its right"),
    ("split NOT", "NOT in query 'split NOT' has no term on its right"),
]


@pytest.mark.parametrize(("query", "fragment"), UNBALANCED_QUERIES)
def test_query_with_unbalanced_parenthesis_is_refused(
    empty_kb: Path, query: str, fragment: str
) -> None:
    call(empty_kb, "search", "split")  # builds the index (a note on stderr) first
    clean_error(call(empty_kb, "search", query), fragment)
    json_error(call(empty_kb, "search", query, "--json"), fragment)


def test_query_with_parentheses_in_a_phrase_or_balanced_still_works(empty_kb: Path) -> None:
    for query in ('"split (kv"', "(split OR tile) kv", '"split AND"', "split and", "NOT split"):
        r = call(empty_kb, "search", query, "--json")
        assert r.rc == 0, r.both


# --------------------------------------------------------------------------- profiles

HEAD = "## Profile: k v1 | b=1\n"
METRICS = "### Metrics\n| Metric | Value |\n|--------|-------|\n| ctas_per_sm | {v} |\n"
SECTION_TWICE: list[tuple[str, str, int]] = [
    ("metrics-twice", HEAD + METRICS.format(v=1) + METRICS.format(v=2), 6),
    (
        "bottleneck-twice",
        HEAD
        + METRICS.format(v=1)
        + "### Bottleneck: Memory-bound\nRoot cause: a\n### Bottleneck: Compute-bound\nRoot cause: b\n",
        8,
    ),
    ("notes-twice", HEAD + METRICS.format(v=1) + "### Notes\na\n### Notes\nb\n", 8),
]


@pytest.mark.parametrize(("case", "text", "line"), SECTION_TWICE, ids=[c[0] for c in SECTION_TWICE])
def test_profile_section_given_twice_is_refused(
    empty_kb: Path, tmp_path: Path, case: str, text: str, line: int
) -> None:
    path = tmp_path / "profile.md"
    path.write_text(text)
    clean_error(call(empty_kb, "recommend", str(path)), "appears twice", located=f"{path}:{line}:")
    json_error(call(empty_kb, "recommend", str(path), "--json"), "appears twice")
