"""The quick path of `kbopt recommend` gives the full command's answer, byte for byte.

Every profile of `benchmarks/profiles/` and `benchmarks/real_profiles/` is recommended
for, with several option sets, both ways on a copy of the current catalog:
`kbopt.cli.quick.answer` (index snapshot, `kbopt.contracts.profile_text`,
`kbopt.ranking`: standard library only) and the full command (`KBOPT_QUICK=0`: pydantic
profile, whoosh index, numpy table).  The quick path must really answer each of them
(it may not quietly decline), and a fresh process that answers through it must not
have loaded pydantic, numpy or whoosh's index.
"""

from __future__ import annotations

import json
import os
import random
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from quick_check import both, indexed

from kbopt.cli import main
from kbopt.cli.quick import answer, text_relevance
from kbopt.contracts.profile import Profile
from kbopt.contracts.profile_text import read_facts
from kbopt.errors import ProblemList
from kbopt.search import get_index, search
from kbopt.search import snapshot as snapshot_mod
from kbopt.store import Store

REPO = Path(__file__).resolve().parent.parent
PROFILES = sorted(
    [
        *(REPO / "benchmarks" / "profiles").glob("*.md"),
        *(REPO / "benchmarks" / "real_profiles").glob("*.md"),
    ]
)
OPTION_SETS = [
    ["--json"],
    [],
    ["--language", "triton", "--json"],
    ["--language=all", "--limit", "3"],
    ["--limit", "1", "--json"],
    ["--language", "cute-dsl", "--limit=25"],
]


@pytest.fixture
def kb(kb_copy: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    return indexed(kb_copy, monkeypatch)


def test_there_are_profiles_to_check() -> None:
    assert len(PROFILES) >= 40


def test_every_profile_answers_equal(kb: Path, capsys, monkeypatch) -> None:
    opportunities = 0
    for path in PROFILES:
        for options in OPTION_SETS:
            out = both(kb, ["recommend", str(path), *options], capsys, monkeypatch)
            if "--json" in options:
                opportunities += len(json.loads(out)["opportunities"])
    assert opportunities > len(PROFILES)  # the answers are not all empty


def test_metrics_the_profile_could_not_measure_answer_equal(
    kb: Path, tmp_path: Path, capsys, monkeypatch
) -> None:
    # A timing-only profile lists the counters it lacks; warnings are weighed over the
    # triggers it could measure, on both paths.
    missing = "\n### Missing Metrics\nCatalog triggers on these metrics could not be evaluated: "
    warned = 0
    for path in PROFILES[:12]:
        text = path.read_text(encoding="utf-8").split("\n### Missing Metrics")[0]
        copy = tmp_path / path.name
        copy.write_text(
            text.rstrip("\n")
            + missing
            + "local_memory_bytes, achieved_occupancy_pct, dram_bytes_ratio, num_splits.\n",
            encoding="utf-8",
        )
        out = both(kb, ["recommend", str(copy), "--json"], capsys, monkeypatch)
        warned += len(json.loads(out)["warnings"])
    assert warned > 0


def test_options_before_the_profile_and_a_relative_path(kb: Path, capsys, monkeypatch) -> None:
    monkeypatch.chdir(REPO)
    profile = "benchmarks/profiles/mla-decode-triton-16-heads.md"
    both(kb, ["recommend", "--json", "--limit", "5", profile], capsys, monkeypatch)


def test_declines_options_it_does_not_answer_the_same(kb: Path) -> None:
    profile = str(PROFILES[0])
    for extra in (
        ["--fill"],
        ["--language", ""],
        ["--language", "cobol"],
        ["--limit", "0"],
        ["--limit", "1001"],
        ["--limit", "x"],
        ["--lim", "3"],
        ["--json", "--json"],
        ["--timeout", "5"],
    ):
        assert answer(["--root", str(kb), "recommend", profile, *extra]) is None, extra
    assert answer(["--root", str(kb), "--timeout", "5", "recommend", profile]) is None


def test_the_default_language_is_the_profiled_versions(kb: Path, capsys, monkeypatch) -> None:
    """A profile of triton_v2 is ranked with the Triton entries by default, as with
    `--language triton`, and the JSON says so; a baseline (torch_eager) names no language,
    so it gets shared entries only, as with `--language shared`."""
    profile = str(REPO / "benchmarks/profiles/mla-decode-triton-16-heads.md")
    default = both(kb, ["recommend", profile, "--json"], capsys, monkeypatch)
    assert default == both(
        kb, ["recommend", profile, "--language", "triton", "--json"], capsys, monkeypatch
    )
    assert json.loads(default)["language"] == "triton"
    baseline = str(REPO / "benchmarks/profiles/layernorm-three-kernels.md")
    shared = both(
        kb, ["recommend", baseline, "--language", "shared", "--json"], capsys, monkeypatch
    )
    assert shared == both(kb, ["recommend", baseline, "--json"], capsys, monkeypatch)


def test_declines_standard_input_and_the_analysis_format(kb: Path, tmp_path: Path) -> None:
    assert answer(["--root", str(kb), "recommend", "-", "--json"]) is None
    analysis = tmp_path / "analysis.md"
    analysis.write_text("Primary bottleneck: memory\n\nEvidence: DRAM at 90% of peak.\n")
    assert answer(["--root", str(kb), "recommend", str(analysis), "--json"]) is None


def test_declines_a_partial_profile(kb: Path, tmp_path: Path, capsys, monkeypatch) -> None:
    # The full command says on stderr what a profile without Bottleneck lacks.
    head = REPO / "benchmarks/profiles/mla-decode-triton-16-heads.md"
    partial = tmp_path / "partial.md"
    partial.write_text(head.read_text().split("### Bottleneck")[0].split("### Metrics")[0])
    assert answer(["--root", str(kb), "recommend", str(partial), "--json"]) is None
    assert main(["--root", str(kb), "recommend", str(partial)]) == 0
    assert "no `### Bottleneck` section" in capsys.readouterr().err


BAD_PROFILES = {
    "no-title.md": "### Stages\n",
    "bad-metric.md": "## Profile: k v1\n### Metrics\n| Metric | Value |\n|---|---|\n| ctas_per_sm | abc |\n",
    "unknown-metric.md": "## Profile: k v1\n### Metrics\n| Metric | Value |\n|---|---|\n| nonsense | 1 |\n",
    "bad-pct.md": "## Profile: k v1\n### Stages\n| Stage | Duration | TC% | DRAM% | Occ% | Bottleneck | Key Issue |\n"
    "|---|---|---|---|---|---|---|\n| main | 5 us | 150% | 1% | 1% | Memory | x |\n",
    "bad-class.md": "## Profile: k v1\n### Bottleneck: Weird-bound\nRoot cause: none.\n",
    "bad-gain.md": "## Profile: k v1\n### Top 3 Opportunities\n1. x -- est. 500000% gain\n",
    "not-utf8.md": b"## Profile: k v1\n\xff\n",
    "header-only.md": "## Profile: k v1\n### Metrics\n| Metric | Value |\n",
    "no-metrics.md": "## Profile: k v1 | x=1\n### Bottleneck: Memory-bound\nRoot cause: x.\n",
}


@pytest.mark.parametrize("name", sorted(BAD_PROFILES))
def test_bad_input_gets_the_full_commands_error(
    kb: Path, tmp_path: Path, name: str, capsys, monkeypatch
) -> None:
    path = tmp_path / name
    content = BAD_PROFILES[name]
    if isinstance(content, bytes):
        path.write_bytes(content)
    else:
        path.write_text(content)
    outputs = []
    for quick in ("1", "0"):
        for json_flag in ([], ["--json"]):
            monkeypatch.setenv("KBOPT_QUICK", quick)
            assert main(["--root", str(kb), "recommend", str(path), *json_flag]) == 2
            outputs.append(capsys.readouterr())
    assert outputs[0] == outputs[2] and outputs[1] == outputs[3]
    assert f"{path}:" in outputs[0].err and "error" in outputs[1].out


def test_a_missing_profile_gets_the_full_commands_error(kb: Path, capsys, monkeypatch) -> None:
    argv = ["--root", str(kb), "recommend", str(kb / "nowhere.md"), "--json"]
    assert answer(argv) is None
    assert main(argv) == 2
    assert "no such file" in capsys.readouterr().out


def test_a_changed_entry_goes_the_full_way(kb: Path, capsys, monkeypatch) -> None:
    profile = str(REPO / "benchmarks/profiles/mla-decode-triton-16-heads.md")
    p = kb / "docs/knowledge/optimizations/split-kv-decode.md"
    p.write_text(p.read_text().replace("## Pitfalls\n", "## Pitfalls\n- Zanzibar yak.\n", 1))
    assert answer(["--root", str(kb), "recommend", profile, "--json"]) is None  # stale
    sys.modules["kbopt.search"]._INDEXES.clear()  # type: ignore[attr-defined]
    assert main(["--root", str(kb), "recommend", profile, "--json"]) == 0  # updates it
    capsys.readouterr()
    both(kb, ["recommend", profile, "--json"], capsys, monkeypatch)


def test_a_project_over_the_bundled_catalog_shows_bundled_paths(
    kb: Path, tmp_path: Path, capsys, monkeypatch
) -> None:
    """A user's project: its own entry over the bundled catalog (here, the copy)."""
    project = tmp_path / "user"
    mine = project / "docs/knowledge/optimizations"
    mine.mkdir(parents=True)
    shutil.copy(kb / "docs/knowledge/optimizations/split-kv-decode.md", mine)
    monkeypatch.setenv("KBOPT_BUNDLED", str(kb / "docs/knowledge"))
    search("kernel", store=Store(project))
    profile = str(REPO / "benchmarks/profiles/mla-decode-triton-16-heads.md")
    out = json.loads(both(project, ["recommend", profile, "--json"], capsys, monkeypatch))
    paths = {o["path"] for o in out["opportunities"] + out["warnings"]}
    # bundled: the file itself, as `kbopt list` shows it; every path shown opens
    assert any(Path(p).is_absolute() for p in paths), paths
    assert all((Path(p) if Path(p).is_absolute() else project / p).is_file() for p in paths)
    both(project, ["recommend", profile, "--language", "all"], capsys, monkeypatch)


def test_the_quick_path_loads_no_heavy_module(kb: Path) -> None:
    profile = str(REPO / "benchmarks/profiles/mla-decode-triton-16-heads.md")
    code = (
        "import sys, io, contextlib\n"
        "from kbopt.cli.quick import answer\n"
        "with contextlib.redirect_stdout(io.StringIO()):\n"
        f"    code = answer(['--root', {str(kb)!r}, 'recommend', {profile!r}, '--json'])\n"
        "print(code)\n"
        "print(' '.join(sorted(sys.modules)))\n"
    )
    env = {k: v for k, v in os.environ.items() if k != "KBOPT_QUICK"}
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, env=env, check=True
    )
    code_line, modules_line = done.stdout.splitlines()
    assert code_line == "0", done.stderr
    modules = set(modules_line.split())
    heavy = {"pydantic", "numpy", "yaml", "kbopt.store", "kbopt.model", "kbopt.strategy"}
    heavy |= {"kbopt.contracts.profile", "kbopt.search.index", "kbopt.search.fast"}
    assert not heavy & modules
    # whoosh's porter2 stemmer (one small module) only: not its index, fields or analyzers.
    assert {m for m in modules if m.split(".")[0] == "whoosh"} <= {
        "whoosh",
        "whoosh.lang",
        "whoosh.lang.porter2",
    }


# ---------------------------------------------------------------------- the parts


def test_text_relevance_equals_the_index(kb: Path) -> None:
    from kbopt.strategy import _relevance

    store = Store(kb)
    ix = get_index(store)
    ix.ensure_fresh()
    snap = snapshot_mod.load(ix.gen.path)  # type: ignore[union-attr]
    assert snap is not None
    for path in PROFILES:
        profile = Profile.parse(path.read_text(), str(path))
        got = text_relevance(snap, profile.text_for_search())
        assert got == _relevance(ix, profile), path.name
        assert got


def test_candidates_equal_the_numpy_table(kb: Path) -> None:
    from kbopt.ranking import candidates, kernel_contexts, trigger_metrics
    from kbopt.strategy import _relevance, _table

    ix = get_index(Store(kb))
    table = _table(ix)
    checked = 0
    for path in PROFILES:
        profile = Profile.parse(path.read_text(), str(path))
        relevance = _relevance(ix, profile)
        metrics = trigger_metrics(profile)
        bottleneck = profile.bottleneck.value if profile.bottleneck else None
        for language in (None, "triton", "all"):
            for limit in (1, 3, 10):
                args = (metrics, relevance, bottleneck, language, limit, kernel_contexts(profile))
                got = candidates(table.cards, table.weights, *args)
                want = table.candidates(*args)
                if got is None:
                    continue  # a tie at the cut: the table decides
                assert sorted(got[0]) == sorted(want[0]), (path.name, language, limit)
                assert sorted(got[1]) == sorted(want[1]), (path.name, language, limit)
                checked += 1
    assert checked > len(PROFILES) * 8


def test_candidates_decline_a_tie_at_the_cut() -> None:
    from kbopt.ranking import Card, candidates, metric_weights

    def card(name: str) -> Card:
        return Card.from_entry_json(
            {
                "name": name,
                "title": name,
                "kind": "optimization",
                "language": None,
                "expected_gain_pct": 20.0,
                "bottlenecks": ["memory"],
                "triggers": [{"metric": "ctas_per_sm", "op": "<", "value": 1.0}],
            },
            f"optimizations/{name}.md",
        )

    cards = [card(f"e{i}") for i in range(15)]  # 15 equal scores, keep 1 + 10 of them
    weights = metric_weights(cards)
    metrics = {"ctas_per_sm": 0.5}
    assert candidates(cards, weights, metrics, {}, "memory", None, 1) is None
    got = candidates(cards, weights, metrics, {}, "memory", None, 5)  # 15 <= 5 + 10: all
    assert got is not None and sorted(got[0]) == list(range(15))


# ---------------------------------------------------------------------- profile facts


def _facts_of(profile: Profile) -> dict[str, object]:
    return {
        "kernel": profile.kernel,
        "version": profile.version,
        "bottleneck": profile.bottleneck.value if profile.bottleneck else None,
        "metrics": list(profile.metrics.items()),
        "text": profile.text_for_search(),
        "notes": list(profile.notes.items()),
        "root_cause": profile.root_cause,
    }


def _light_facts(text: str) -> dict[str, object] | None:
    facts = read_facts(text)
    if facts is None:
        return None
    return {
        "kernel": facts.kernel,
        "version": facts.version,
        "bottleneck": facts.bottleneck,
        "metrics": list(facts.metrics.items()),
        "text": facts.text_for_search(),
        "notes": list(facts.notes.items()),
        "root_cause": facts.root_cause,
    }


def _parsed(text: str) -> dict[str, object] | None:
    try:
        return _facts_of(Profile.parse(text, "p.md"))
    except ProblemList:
        return None


def test_profile_facts_equal_the_parser_on_every_profile() -> None:
    for path in PROFILES:
        text = path.read_text()
        full = _parsed(text)
        assert full is not None and _light_facts(text) == full, path.name


_CELLS = [
    "",
    "-",
    "abc",
    "12",
    "1,024",
    "0,24",
    "150%",
    "-5",
    "1e400",
    "12 us",
    "3 ms",
    "n/a",
    "**x**",
    "nan",
    "inf",
    "0.5%",
    "7 GB",
    "0.24",
    "total",
    "Memory",
    "1.5e3",
    "+3",
    ".5",
]
_LINES = [
    "### Stages",
    "### Metrics",
    "## Profile: x y",
    "junk text",
    "| a | b |",
    "### Bottleneck: Weird",
    "### Bottleneck: compute-bound",
    "### Top 3 Opportunities",
    "1. [x](y.md) -- est. 20% gain -- trigger: ctas_per_sm=0.2",
    "1. x -- est. 200000% gain",
    "1. [](y) -- est. 5% gain",
    "2) x -- est. 10-20% gain",
    "### vs Baseline",
    "| Metric | Previous | Current | Change |",
    "<!-- note -->",
    "### Context",
    "",
    "| Metric | Value |",
    "| ctas_per_sm | 0.5 |",
    "| sm__warps_active.avg.pct_of_peak_sustained_active | 40 |",
    "| total | 5 us | 1% | 2% | 3% | Memory | x |",
    "|  | 5 us | 1% | 2% | 3% | Memory | x |",
    "|---|---|",
    "#### deeper",
    "Root cause: **Root cause:** twice",
]


def _mutate(text: str, rng: random.Random) -> str:
    lines = text.splitlines()
    for _ in range(rng.randint(1, 3)):
        i = rng.randrange(len(lines) + 1)
        op = rng.randrange(5)
        if op == 0 and lines:
            del lines[min(i, len(lines) - 1)]
        elif op == 1 and lines:
            j = min(i, len(lines) - 1)
            lines.insert(j, lines[j])
        elif op == 2:
            lines.insert(i, rng.choice(_LINES))
        elif op == 3:
            rows = [k for k, ln in enumerate(lines) if ln.strip().startswith("|")]
            if rows:
                k = rng.choice(rows)
                cells = lines[k].strip().strip("|").split("|")
                cells[rng.randrange(len(cells))] = f" {rng.choice(_CELLS)} "
                lines[k] = "|" + "|".join(cells) + "|"
        else:
            titles = [k for k, ln in enumerate(lines) if ln.startswith("## Profile:")]
            if titles:
                extra = rng.choice(
                    [", hidden=abc", ", rows=-1", ", ctas_per_sm=1e20", ", b=3, b=4", ", x", ""]
                )
                lines[titles[0]] += extra
    return "\n".join(lines) + "\n"


def test_profile_facts_accept_exactly_what_the_parser_accepts() -> None:
    """Randomly damaged profiles: the light reader accepts a text if and only if the
    parser does, and then reads the same facts."""
    rng = random.Random(17)
    accepted = refused = 0
    texts = [p.read_text() for p in PROFILES]
    for _ in range(4000):
        text = _mutate(rng.choice(texts), rng)
        light, full = _light_facts(text), _parsed(text)
        assert light == full, text
        if full is None:
            refused += 1
        else:
            accepted += 1
    assert accepted > 400 and refused > 2000


def test_search_text_shows_the_score_as_computed() -> None:
    """`kbopt search` (text) prints the score as computed, as the full command does;
    --json's rounding to 4 decimals first would turn 10.00499 into 10.01."""
    from kbopt.cli.quick import _search_text

    hit = {"id": "x", "kind": "optimization", "language": None, "layer": "project"}
    hit |= {"title": "X", "path": "docs/knowledge/optimizations/x.md", "snippet": ""}
    hit["score"] = round(10.00499, 4)
    assert _search_text([hit], [10.00499]).startswith("  10.00  x  [optimization, shared]")
