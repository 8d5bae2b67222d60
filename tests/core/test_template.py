"""Template I/O: parse into the typed model, render back, and a corpus of broken entries."""

from __future__ import annotations

import pytest

from kbopt import ProblemList, parse_entry, render_entry
from kbopt.store import Store
from kbopt.vocab import Kind, SourceType
from tests.core.sample import LINE, VALID


def test_valid_entry_parses_into_typed_fields() -> None:
    e = parse_entry(VALID, name="sample-opt")
    assert e.kind is Kind.OPTIMIZATION and e.language is None and e.scope.value == "shared"
    assert e.title == "Sample optimization"
    assert e.contexts == ["Attention decode against a long KV cache."]
    assert [t.expression for t in e.triggers] == ["ctas_per_sm < 1"]
    assert e.triggers[0].note == "SMs idle."
    assert e.triggers[0].holds({"ctas_per_sm": 0.5}) is True
    assert e.triggers[0].holds({"ctas_per_sm": 2}) is False
    assert e.triggers[0].holds({}) is None
    assert [m.metric for m in e.affected_metrics] == ["dram_throughput_pct"]
    assert e.implementation == "x = 1"
    block = e.evidence[0]
    assert block.source_type is SourceType.EXTERNAL_REPORT
    assert block.rows[0].change_pct == -50.0


def test_canonical_text_round_trips_byte_identically() -> None:
    e = parse_entry(VALID, name="sample-opt")
    assert render_entry(e) == VALID
    assert render_entry(parse_entry(render_entry(e), name="sample-opt")) == VALID


def test_evidence_as_dataframe() -> None:
    frame = parse_entry(VALID, name="sample-opt").evidence_frame()
    assert list(frame["config"]) == ["b=1"]
    assert frame.loc[0, "change_pct"] == -50.0
    assert frame.loc[0, "source_type"] == "external report"


def test_every_bundled_entry_round_trips(repo_root) -> None:
    store = Store(repo_root)
    entries = store.entries()
    assert len(entries) >= 1
    for entry in entries:
        text = render_entry(entry)
        assert render_entry(parse_entry(text, name=entry.name)) == text
        # The files on disk are kept in canonical form.
        assert store.path_for(entry).read_text(encoding="utf-8") == text, entry.name


def _replace(old: str, new: str):
    def edit(text: str) -> str:
        assert old in text, old
        return text.replace(old, new, 1)

    return edit


# (case, edit of VALID, expected line, expected message fragment)
BROKEN = [
    ("no front matter", lambda t: t.split("---\n", 2)[2], 1, "missing YAML front matter"),
    (
        "front matter not closed",
        lambda t: t.replace("---\n\n# Sample", "\n# Sample", 1),
        1,
        "not closed",
    ),
    ("bad yaml", _replace("risk: low", "risk: [low"), None, "not valid YAML"),
    (
        "unknown key",
        _replace("risk: low", "risk: low\ncolour: blue"),
        LINE["risk: low"] + 1,
        "unknown front-matter key 'colour'",
    ),
    (
        "unknown kind",
        _replace("kind: optimization", "kind: trick"),
        LINE["kind: optimization"],
        "kind",
    ),
    (
        "unknown bottleneck",
        _replace("bottlenecks: [memory]", "bottlenecks: [disk]"),
        LINE["bottlenecks: [memory]"],
        "bottlenecks",
    ),
    (
        "unknown context",
        _replace("applies_to: [attention-decode]", "applies_to: [sorting]"),
        LINE["applies_to: [attention-decode]"],
        "unknown context 'sorting'",
    ),
    ("missing impact", _replace("impact: high\n", ""), 1, "impact: missing"),
    (
        "name mismatch",
        _replace("name: sample-opt", "name: other-name"),
        LINE["name: sample-opt"],
        "does not match",
    ),
    (
        "missing title",
        _replace("# Sample optimization\n", ""),
        None,
        "missing the '# <Name>' title",
    ),
    (
        "missing section",
        _replace("## Pitfalls\n- Too many splits.\n", ""),
        None,
        "missing section '## Pitfalls'",
    ),
    (
        "out of order",
        lambda t: t.replace("## Mechanism\nSplits the work.\n", "").replace(
            "## Generalization", "## Mechanism\nSplits the work.\n\n## Generalization"
        ),
        None,
        "out of order",
    ),
    (
        "unknown section",
        _replace("## Pitfalls", "## Caveats"),
        LINE["## Pitfalls"],
        "unknown section '## Caveats'",
    ),
    (
        "empty when to apply",
        _replace(
            "- Attention decode against a long KV cache.\n- `ctas_per_sm < 1`: SMs idle.\n", ""
        ),
        LINE["## When to Apply"],
        "'## When to Apply' is empty",
    ),
    (
        "no context",
        _replace("- Attention decode against a long KV cache.\n", ""),
        LINE["## When to Apply"],
        "states no context",
    ),
    (
        "unknown trigger metric",
        _replace("`ctas_per_sm < 1`", "`cta_per_sm < 1`"),
        LINE["- `ctas_per_sm < 1`: SMs idle."],
        "unknown metric 'cta_per_sm'",
    ),
    (
        "malformed trigger",
        _replace("`ctas_per_sm < 1`", "`ctas_per_sm < lots`"),
        LINE["- `ctas_per_sm < 1`: SMs idle."],
        "bad trigger",
    ),
    (
        "unknown affected metric",
        _replace("- `dram_throughput_pct`: rises.", "- `bandwidth`: rises."),
        LINE["- `dram_throughput_pct`: rises."],
        "unknown metric 'bandwidth'",
    ),
    (
        "no code fence",
        _replace("```python\nx = 1\n```\n", "x = 1\n"),
        LINE["```python"],
        "outside the ```python fence",
    ),
    (
        "missing source type",
        _replace("Source type: external report\n", ""),
        LINE["Source type: external report"],
        "must start with a 'Source type:' line",
    ),
    (
        "unknown source type",
        _replace("Source type: external report", "Source type: rumour"),
        LINE["Source type: external report"],
        "source_type",
    ),
    (
        "evidence without source",
        _replace("Source: Some paper (2023), A100\n", ""),
        LINE["Source type: external report"],
        "evidence without a source",
    ),
    (
        "bad table header",
        _replace("| Config | Before | After | Change |", "| Config | Time |"),
        LINE["| Config | Before | After | Change |"],
        "header must be",
    ),
    (
        "short table row",
        _replace("| b=1 | 10 us | 5 us | -50% |", "| b=1 | 10 us |"),
        LINE["| b=1 | 10 us | 5 us | -50% |"],
        "has 2 cells, expected 4",
    ),
    (
        "local experiment without command",
        _replace("Source type: external report", "Source type: local experiment"),
        LINE["Source type: external report"],
        "needs a `Command:` line",
    ),
    (
        "bad interaction",
        lambda t: t + "- helps `split-kv-decode`\n",
        len(VALID.splitlines()) + 1,
        "unknown relation 'helps'",
    ),
    (
        "interaction without target",
        lambda t: t + "- composes split-kv-decode\n",
        len(VALID.splitlines()) + 1,
        "an interaction must read",
    ),
    (
        "pitfalls not a list",
        _replace("- Too many splits.", "Too many splits."),
        LINE["- Too many splits."],
        "takes a bullet list",
    ),
]


@pytest.mark.parametrize("case, edit, line, fragment", BROKEN, ids=[b[0] for b in BROKEN])
def test_broken_entry_is_rejected_with_location(case, edit, line, fragment) -> None:
    text = edit(VALID)
    with pytest.raises(ProblemList) as info:
        parse_entry(text, name="sample-opt", path="x.md")
    messages = [str(p) for p in info.value.problems]
    matching = [m for m in messages if fragment in m]
    assert matching, f"{case}: expected {fragment!r} in {messages}"
    assert all(m.startswith("x.md:") for m in messages)
    if line is not None:
        assert any(m.startswith(f"x.md:{line}: ") for m in matching), (case, messages)


def test_alternative_triggers_on_one_bullet_round_trip() -> None:
    """`A` or `B`: note is one condition of two triggers (the second marked as the first's
    alternative, the note on the first), and renders back to the same bullet."""
    text = VALID.replace(
        "- `ctas_per_sm < 1`: SMs idle.",
        "- `ctas_per_sm < 1` or `waves_per_sm < 0.5`: SMs idle.\n- `kv_len >= 1024`: long.",
    )
    entry = parse_entry(text)
    got = [(t.expression, t.alternative, t.note) for t in entry.triggers]
    assert got == [
        ("ctas_per_sm < 1", False, "SMs idle."),
        ("waves_per_sm < 0.5", True, ""),
        ("kv_len >= 1024", False, "long."),
    ]
    rendered = render_entry(entry)
    assert "- `ctas_per_sm < 1` or `waves_per_sm < 0.5`: SMs idle." in rendered
    assert parse_entry(rendered) == entry
    # a bad alternative is reported like any bad trigger
    with pytest.raises(ProblemList, match="bad trigger"):
        parse_entry(text.replace("`waves_per_sm < 0.5`", "`no_such_metric < 0.5`"))


def test_alternatives_survive_both_stored_forms_the_ranking_reads() -> None:
    """The ranking builds its cards from the stored entry (the model's JSON) on a warm
    index and from the card column on a cold one: both keep the alternatives together."""
    import json

    from kbopt.ranking import Card
    from kbopt.search.schema import card_data

    text = VALID.replace(
        "- `ctas_per_sm < 1`: SMs idle.",
        "- `ctas_per_sm < 1` or `waves_per_sm < 0.5`: SMs idle.\n- `kv_len >= 1024`: long.",
    )
    entry = parse_entry(text)
    for data in (json.loads(json.dumps(entry.model_dump(mode="json"))), card_data(entry)):
        card = Card.from_entry_json(data, "optimizations/x.md")
        assert [[t[3] for t in c] for c in card.conditions()] == [
            ["ctas_per_sm < 1", "waves_per_sm < 0.5"],
            ["kv_len >= 1024"],
        ]
