"""Strategy selection: triggers, scope (S3), warnings, estimated gain, CLI."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from test_search_fixtures import small_kb

from kbopt.cli import main
from kbopt.contracts.profile import TOP_HEADING, Profile, Stage
from kbopt.errors import KbError, ProblemList
from kbopt.store import Store
from kbopt.strategy import recommend
from kbopt.vocab import Bottleneck


@pytest.fixture
def kb(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Store:
    monkeypatch.delenv("KBOPT_CACHE_DIR", raising=False)
    return Store(small_kb(tmp_path / "kb"))


def profile(root_cause: str = "", **measured: float) -> Profile:
    return Profile(
        kernel="my_kernel",
        version="v1",
        config={"b": 32, "s": 1, "t": 4096},
        stages=[Stage(name="main", duration_us=100, dram_pct=30, occ_pct=20)],
        measured=measured,
        bottleneck=Bottleneck.LATENCY,
        root_cause=root_cause,
    )


def test_fired_trigger_ranks_first_with_its_value(kb: Store) -> None:
    s = recommend(
        profile("Too many live registers per thread.", registers_per_thread=200, ctas_per_sm=2),
        store=kb,
    )
    top = s.opportunities[0]
    assert top.id == "reduce-register-pressure"
    assert top.trigger in {"registers_per_thread=200", "achieved_occupancy_pct=20"}
    assert set(top.fired) == {"registers_per_thread > 128", "achieved_occupancy_pct < 30"}
    assert top.estimated_gain == pytest.approx(25)
    assert top.path == "docs/knowledge/optimizations/reduce-register-pressure.md"
    # A trigger that was checked and does not hold excludes the entry.
    assert "split-the-grid" not in [o.id for o in s.opportunities]


def test_refuted_entries_are_never_proposed(kb: Store) -> None:
    s = recommend(profile(registers_per_thread=200), store=kb)
    assert "refuted-magic" not in [o.id for o in s.opportunities]


def test_small_grid_profile_and_anti_pattern_warning(kb: Store) -> None:
    s = recommend(
        profile(ctas_per_sm=0.25, registers_per_thread=64, achieved_occupancy_pct=50), store=kb
    )
    assert s.opportunities[0].id == "split-the-grid"
    assert s.opportunities[0].trigger == "ctas_per_sm=0.25"  # a symptom before kv_len
    assert s.warnings == []
    s = recommend(profile(ctas_per_sm=2, num_splits=8, registers_per_thread=64), store=kb)
    assert [w.id for w in s.warnings] == ["over-splitting"]
    assert s.warnings[0].kind == "anti-pattern"


def test_language_scope(kb: Store) -> None:
    p = profile(shared_bank_conflicts=50_000, registers_per_thread=64, achieved_occupancy_pct=50)
    assert "swizzle-shared-tiles" not in [o.id for o in recommend(p, store=kb).opportunities]
    got = recommend(p, language="triton", store=kb).opportunities
    assert got[0].id == "swizzle-shared-tiles"
    assert "swizzle-shared-tiles" not in [
        o.id for o in recommend(p, language="cute-dsl", store=kb).opportunities
    ]
    with pytest.raises(KbError, match="unknown language 'cuda'"):
        recommend(p, language="cuda", store=kb)


def test_gain_is_capped_by_the_headroom_to_the_floor(kb: Store) -> None:
    s = recommend(profile(ctas_per_sm=0.25, pct_of_floor=90, achieved_occupancy_pct=50), store=kb)
    top = s.opportunities[0]
    assert top.id == "split-the-grid"
    assert top.estimated_gain == pytest.approx(100 / 90 * 100 - 100, abs=0.01)


def test_filled_profile_has_the_contract_top_3(kb: Store) -> None:
    s = recommend(profile(registers_per_thread=200, ctas_per_sm=0.5), store=kb)
    filled = s.filled_profile()
    assert 1 <= len(filled.opportunities) <= 3
    text = filled.render()
    assert f"### {TOP_HEADING}" in text and "ranked by how strongly the profile calls" in text
    assert Profile.parse(text) == filled
    first = filled.opportunities[0]
    assert first.link == s.opportunities[0].path and first.trigger == s.opportunities[0].trigger


def test_text_relevance_breaks_ties_without_metrics(kb: Store) -> None:
    p = Profile(
        kernel="k",
        version="v1",
        bottleneck=Bottleneck.LATENCY,
        root_cause="Shared memory bank conflicts on the swizzle-free tile. Columns hit one bank.",
    )
    got = recommend(p, language="triton", store=kb).opportunities
    assert got and got[0].id == "swizzle-shared-tiles" and got[0].trigger == ""


def test_cli_recommend_json_fill_and_analysis(
    kb: Store, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "p.md"
    path.write_text(profile(registers_per_thread=200).render())
    root = ["--root", str(kb.root)]
    assert main([*root, "recommend", str(path), "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    first = data["opportunities"][0]
    assert {"id", "title", "kind", "score", "estimated_gain", "trigger"} <= set(first)
    assert first["id"] == "reduce-register-pressure"
    assert main([*root, "recommend", str(path), "--fill"]) == 0
    assert "1. [Reduce register pressure" in capsys.readouterr().out
    french = tmp_path / "analysis.txt"
    french.write_text(
        "Primary bottleneck: memory-bound\nEvidence: Memory bandwidth at 40% of peak, "
        "ctas_per_sm=0.3, kv_len=8192\nRecommendations:\n1. [High] Split the KV axis\n"
    )
    assert main([*root, "recommend", str(french), "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["opportunities"][0]["id"] == "split-the-grid"
    bad = tmp_path / "bad.md"
    bad.write_text("## Profile: k v1\n### Bottleneck: Disk-bound\n")
    assert main([*root, "recommend", str(bad)]) == 2
    assert "bad.md:2:" in capsys.readouterr().err


def test_vectorized_selection_agrees_with_evaluating_every_card(kb: Store) -> None:
    from kbopt.search import get_index
    from kbopt.strategy import _cards, _evaluate, _relevance, metric_weights, trigger_metrics

    ix = get_index(kb)
    for p in [
        profile("Too many registers.", registers_per_thread=200),
        profile(ctas_per_sm=0.25, achieved_occupancy_pct=50),
        profile(shared_bank_conflicts=10**6, ctas_per_sm=2, num_splits=8),
    ]:
        got = recommend(p, language="triton", store=kb)
        cards = _cards(ix)
        weights = metric_weights(cards)
        rel = _relevance(ix, p)
        metrics = trigger_metrics(p)
        expect = []
        for c in cards:
            if c.status == "refuted" or c.kind == "anti-pattern":
                continue
            if c.language not in (None, "triton"):
                continue
            v = _evaluate(c, metrics, rel.get(c.name, 0.0), "latency", weights)
            if v is not None:
                expect.append((-round(v[0], 6), c.name))
        assert [o.id for o in got.opportunities] == [n for _, n in sorted(expect)][:10]


def test_many_entries_load_cards_from_the_column(tmp_path: Path) -> None:
    from test_search_fixtures import entry_text, write_entry

    from kbopt.search import get_index
    from kbopt.strategy import _cards

    root = tmp_path / "big"
    for i in range(80):  # above the per-path lookup threshold: the column pass runs
        write_entry(
            root,
            entry_text(
                f"filler-{i:02d}", f"Filler entry number {i}", triggers=("batch > 1000000",)
            ),
        )
    write_entry(
        root,
        entry_text("the-needle", "Needle for spills", triggers=("local_memory_bytes > 0",)),
    )
    store = Store(root)
    assert len(_cards(get_index(store))) == 81
    got = recommend(profile(local_memory_bytes=4096, achieved_occupancy_pct=50), store=store)
    assert [o.id for o in got.opportunities][:1] == ["the-needle"]


def test_a_warning_is_not_held_back_by_metrics_the_profile_could_not_measure(kb: Store) -> None:
    # One of over-splitting's two triggers is known: too thin to warn on ...
    thin = profile(ctas_per_sm=2, registers_per_thread=64)
    assert recommend(thin, store=kb).warnings == []
    # ... unless the profile says it could not measure the other one (counters off): the
    # confidence is over the triggers it could have measured.
    thin.notes["Missing Metrics"] = (
        "Catalog triggers on these metrics could not be evaluated: dram_bytes, num_splits."
    )
    assert [w.id for w in recommend(thin, store=kb).warnings] == ["over-splitting"]
    # a trigger that was measured and fails still counts against it
    thin.measured["num_splits"] = 1
    assert recommend(thin, store=kb).warnings == []


def _card(name: str, triggers: list[tuple[str, str, float]], groups: tuple[int, ...] = ()) -> Any:
    from kbopt.ranking import Card

    return Card(
        name=name,
        title=name,
        kind="optimization",
        language=None,
        path=f"docs/knowledge/optimizations/{name}.md",
        status="validated",
        bottlenecks=frozenset({"latency"}),
        contexts=frozenset({"any-kernel"}),
        gain=10.0,
        impact="medium",
        risk="low",
        triggers=tuple((m, op, v, f"{m} {op} {v:g}") for m, op, v in triggers),
        groups=groups,
    )


def test_alternative_triggers_are_one_condition_that_any_of_them_fires() -> None:
    """`registers_per_thread >= 200` or `occupancy_limit_registers <= 1`, then a second
    condition: one alternative holding fires the first condition whole; it fails when none
    of the measured ones holds (one unmeasured does not keep it open); with none measured
    it is open.  The numpy table, the plain-Python twin and `evaluate` agree."""
    import numpy as np  # noqa: F401  (the table needs it)

    from kbopt.ranking import candidates, evaluate, metric_weights
    from kbopt.strategy import _Table

    trig = [
        ("registers_per_thread", ">=", 200.0),
        ("occupancy_limit_registers", "<=", 1.0),
        ("dram_throughput_pct", "<", 60.0),
    ]
    grouped = _card("grouped", trig, (0, 0, 1))
    flat = _card("flat", trig)
    other = _card("other", [("dram_throughput_pct", "<", 60.0)])
    cards = [grouped, flat, other]
    weights = metric_weights(cards)

    def ev(card: Any, **m: float) -> Any:
        return evaluate(card, m, 0.0, "latency", weights)

    fires_one = {
        "registers_per_thread": 91.0,
        "occupancy_limit_registers": 1.0,
        "dram_throughput_pct": 50.0,
    }
    score, coverage, fired, failed, _ = ev(grouped, **fires_one)
    assert set(fired) == {"occupancy_limit_registers <= 1", "dram_throughput_pct < 60"}
    assert coverage == 1.0 and failed == ()  # both conditions hold
    assert ev(flat, **fires_one)[1] == pytest.approx(2 / 3)  # as separate triggers, one fails
    assert score > ev(flat, **fires_one)[0]
    # both alternatives measured and failing: the condition fails (the other still fires)
    both_fail = {**fires_one, "occupancy_limit_registers": 3.0}
    assert ev(grouped, **both_fail)[1] == pytest.approx(1 / 2)
    # one alternative unmeasured, the other failing: the condition fails all the same
    one_fails = {"registers_per_thread": 91.0, "dram_throughput_pct": 50.0}
    assert ev(grouped, **one_fails)[1] == pytest.approx(1 / 2)
    # neither measured: the condition is open (neither fired nor failed)
    open_one = {"dram_throughput_pct": 50.0}
    assert ev(grouped, **open_one)[1] == 1.0 and ev(grouped, **open_one)[3] == ()

    table = _Table(cards)
    for m in (fires_one, both_fail, one_fails, open_one, {"registers_per_thread": 250.0}):
        opts, _ = table.candidates(m, {}, "latency", None, 10)
        twin = candidates(cards, weights, m, {}, "latency", None, 10)
        assert twin is not None and sorted(twin[0]) == sorted(opts)
        expect = sorted(i for i, c in enumerate(cards) if ev(c, **m) is not None)
        assert sorted(opts) == expect


def test_a_kernel_at_its_floor_gets_a_note_before_the_ranking(kb: Store) -> None:
    """At or past 95% of the floor no in-kernel change can gain much, whatever ranks
    first: the answer says so, and that only lowering the floor can."""
    from kbopt.ranking import floor_note

    assert floor_note({"pct_of_floor": 80.0}) is None and floor_note({}) is None
    note = floor_note({"pct_of_floor": 106.0})
    assert note is not None and "106%" in note and "at most 0%" in note and "FP8" in note
    got = recommend(profile("", pct_of_floor=97.0, ctas_per_sm=0.25), store=kb)
    assert got.to_dict()["note"] and "at most 3%" in got.to_text()
    assert recommend(profile("", pct_of_floor=50.0), store=kb).to_dict()["note"] is None


ROOM_ENTRY = """---
name: more-loads-per-thread
kind: optimization
applies_to: [memory-bound]
bottlenecks: [memory]
impact: medium
expected_gain_pct: 10
risk: low
status: proposed
created: 2026-12-03
updated: 2026-12-03
room_to_act: ["registers_per_thread <= 64", "ctas_per_sm >= 2"]
---

# More independent loads per thread

## When to Apply
- Streaming kernels.
- `dram_throughput_pct < 80`: short of the sustained rate.
- `registers_per_thread <= 64`: each thread has room for more loads.
- `ctas_per_sm >= 2`: every SM has programs.

## Mechanism
Each thread issues more loads before the first use.

## Affected Metrics
- `dram_throughput_pct`: rises

## Implementation
```python
pass
```

## Performance Evidence
Source type: external report
Source: a test
| Config | Before | After | Change |
|--------|--------|-------|--------|
| x | n/a | n/a | n/a |

## Generalization
Keep loads in flight.

## Pitfalls
- Registers.

## Interactions
"""


def test_room_to_act_marks_conditions_and_round_trips() -> None:
    from kbopt.template import parse_entry, render_entry

    entry = parse_entry(ROOM_ENTRY, "more-loads-per-thread")
    assert [t.expression for t in entry.triggers if t.room] == [
        "registers_per_thread <= 64",
        "ctas_per_sm >= 2",
    ]
    assert render_entry(entry) == ROOM_ENTRY
    bad = ROOM_ENTRY.replace('"ctas_per_sm >= 2"]', '"ctas_per_sm >= 4"]')
    with pytest.raises(ProblemList) as err:
        parse_entry(bad, "more-loads-per-thread")
    assert "<entry>:12: room_to_act: `ctas_per_sm >= 4` is not a condition" in str(err.value)
    with pytest.raises(ProblemList, match="room_to_act: a list of conditions"):
        parse_entry(
            ROOM_ENTRY.replace('room_to_act: ["', 'room_to_act: "').replace(
                '", "ctas_per_sm >= 2"]', '"'
            ),
            "more-loads-per-thread",
        )


def test_room_to_act_holding_is_not_a_symptom(tmp_path: Path) -> None:
    """Room to act earns a shape fact's credit: it cannot carry an entry whose symptom was
    measured and fails, and it weighs less than a symptom when both hold."""
    from kbopt.ranking import Card

    root = tmp_path / "kb"
    (root / "docs" / "knowledge" / "optimizations").mkdir(parents=True)
    (root / "docs" / "knowledge" / "optimizations" / "more-loads-per-thread.md").write_text(
        ROOM_ENTRY
    )
    store = Store(root, bundled=False)
    near_floor = profile(dram_throughput_pct=92, registers_per_thread=40, ctas_per_sm=8)
    assert "more-loads-per-thread" not in [
        o.id for o in recommend(near_floor, store=store).opportunities
    ]
    short = recommend(profile(dram_throughput_pct=50, registers_per_thread=40), store=store)
    assert short.opportunities[0].id == "more-loads-per-thread"
    assert short.opportunities[0].trigger == "dram_throughput_pct=50"  # the symptom first
    card = Card.from_entry_json(
        {
            "name": "x",
            "title": "x",
            "kind": "optimization",
            "triggers": [
                {"metric": "registers_per_thread", "op": "<=", "value": 64, "room": True},
                {"metric": "dram_throughput_pct", "op": "<", "value": 80},
            ],
        },
        "optimizations/x.md",
    )
    facts = [card.is_fact(c) for c in card.conditions()]
    assert facts == [True, False]


def test_a_defining_condition_measured_false_rules_the_entry_out() -> None:
    """An anti-pattern whose own condition (global atomics at all) was measured and fails is
    neither warned about nor proposed, however many generic symptoms hold; unmeasured, it
    leaves the entry open.  The numpy table, the plain-Python twin and `evaluate` agree, and
    the front matter's `defining` list marks the condition and round-trips."""
    import dataclasses

    from kbopt.ranking import candidates, evaluate, metric_weights
    from kbopt.strategy import _Table
    from kbopt.template import parse_entry, render_entry

    trig = [
        ("global_reduction_sectors", ">", 0.0),
        ("dram_throughput_pct", "<", 40.0),
        ("sm_throughput_pct", "<", 40.0),
    ]
    atomics = dataclasses.replace(
        _card("atomics", trig),
        kind="anti-pattern",
        defining=frozenset({"global_reduction_sectors > 0"}),
    )
    plain = dataclasses.replace(_card("plain", trig), kind="anti-pattern")
    others = [_card(f"other{i}", [("dram_throughput_pct", "<", 60.0)]) for i in range(2)]
    cards = [atomics, plain, *others]
    weights = metric_weights(cards)
    idle = {"dram_throughput_pct": 10.0, "sm_throughput_pct": 10.0}
    table = _Table(cards)
    for m, warned in (
        ({**idle, "global_reduction_sectors": 0.0}, {"plain"}),  # no atomics: not this trap
        ({**idle, "global_reduction_sectors": 800.0}, {"atomics", "plain"}),
        (idle, {"atomics", "plain"}),  # not measured: open
    ):
        _, warn = table.candidates(m, {}, "latency", None, 10)
        twin = candidates(cards, weights, m, {}, "latency", None, 10)
        assert twin is not None and sorted(twin[1]) == sorted(warn)
        assert {cards[i].name for i in warn} == warned
        held = {c.name for c in cards[:2] if evaluate(c, m, 0.0, "latency", weights)}
        assert held == warned

    # With no optimization eligible at all, the trap is still named.
    alone = _Table([atomics])
    _, warn = alone.candidates({**idle, "global_reduction_sectors": 800.0}, {}, "latency", None, 10)
    assert warn == [0]
    twin = candidates(
        [atomics],
        metric_weights([atomics]),
        {**idle, "global_reduction_sectors": 800.0},
        {},
        "latency",
        None,
        10,
    )
    assert twin == ([], [0])

    text = ROOM_ENTRY.replace(
        'room_to_act: ["registers_per_thread <= 64", "ctas_per_sm >= 2"]',
        'room_to_act: ["registers_per_thread <= 64"]\ndefining: ["dram_throughput_pct < 80"]',
    )
    entry = parse_entry(text, "more-loads-per-thread")
    assert [t.expression for t in entry.triggers if t.defining] == ["dram_throughput_pct < 80"]
    assert render_entry(entry) == text
    with pytest.raises(ProblemList, match="defining: `ctas_per_sm >= 4` is not a condition"):
        parse_entry(
            text.replace('defining: ["dram', 'defining: ["ctas_per_sm >= 4", "dram'),
            "more-loads-per-thread",
        )


def test_tensor_core_utilization_is_no_symptom_for_a_kernel_without_matrix_products() -> None:
    """ncu's tensor-pipe counter reads a few percent on row kernels without any MMA: when
    the spec counts no FLOPs (arithmetic intensity 0), or the counter reads exactly 0, the
    metric is left out of the triggers; a kernel with FLOPs keeps its low value."""
    from kbopt.ranking import trigger_metrics

    def seen(**m: float) -> dict[str, float]:
        return trigger_metrics(profile(**m))

    assert "tensor_core_util_pct" not in seen(tensor_core_util_pct=4.3, arithmetic_intensity=0)
    assert "tensor_core_util_pct" not in seen(tensor_core_util_pct=0.0)
    kept = seen(tensor_core_util_pct=3.7, arithmetic_intensity=12.0)
    assert kept["tensor_core_util_pct"] == 3.7
    assert seen(tensor_core_util_pct=3.7)["tensor_core_util_pct"] == 3.7  # FLOPs unknown


def test_local_traffic_of_local_arrays_is_no_spill_symptom() -> None:
    """A kernel whose compiled code spills nothing but declares local arrays (a `tl.sin`)
    moves a little local traffic: triggers on local memory mean spills, so it is left out;
    with a spill, or when the compiled kernel is not known, it stays."""
    from kbopt.ranking import trigger_metrics

    def seen(**m: float) -> dict[str, float]:
        return trigger_metrics(profile(**m))

    arrays = {"local_array_bytes_per_thread": 28.0, "local_memory_bytes": 17920.0}
    assert "local_memory_bytes" not in seen(spill_bytes_per_thread=0.0, **arrays)
    assert seen(spill_bytes_per_thread=8.0, **arrays)["local_memory_bytes"] == 17920.0
    assert seen(local_memory_bytes=4096.0)["local_memory_bytes"] == 4096.0
    assert seen(spill_bytes_per_thread=0.0, local_memory_bytes=64.0)["local_memory_bytes"] == 64.0


def test_a_spec_that_names_no_kind_of_kernel_keeps_matrix_product_entries_off() -> None:
    """Contexts that say only how a kernel behaves or is called (memory-bound, multi-kernel)
    do not say what it is, but they say it is neither attention nor a GEMM, whose specs
    name their kind: entries tied only to those kinds stay off, one tied to a broad pattern
    (reduction) stays on; without contexts every entry stays; a kind (elementwise) keeps
    every kind-tied entry off.  The numpy table and its plain-Python twin agree.
    (FlagGems' bicubic resize, declared memory-bound only, had the attention softmax-overlap
    entry ranked first on the H200; its repeat_interleave, the GEMM tile-growing entry.)"""
    import dataclasses

    from kbopt.ranking import candidates, metric_weights
    from kbopt.strategy import _Table

    attention = dataclasses.replace(
        _card("attention-only", [("dram_throughput_pct", "<", 60.0)]),
        contexts=frozenset({"attention", "online-softmax", "compute-bound"}),
    )
    generic = _card("generic", [("dram_throughput_pct", "<", 60.0)])
    gemm = dataclasses.replace(
        _card("gemm-tied", [("dram_throughput_pct", "<", 60.0)]),
        contexts=frozenset({"gemm", "grouped-gemm"}),
    )
    reduction = dataclasses.replace(
        _card("reduction-tied", [("dram_throughput_pct", "<", 60.0)]),
        contexts=frozenset({"reduction", "gemm"}),
    )
    cards = [attention, generic, gemm, reduction]
    weights = metric_weights(cards)
    table = _Table(cards)
    m = {"dram_throughput_pct": 50.0}
    for contexts, expect in (
        (frozenset(), [0, 1, 2, 3]),
        (frozenset({"memory-bound", "multi-kernel"}), [1, 3]),
        (frozenset({"elementwise", "memory-bound"}), [1]),
        (frozenset({"attention"}), [0, 1]),
        (frozenset({"gemm"}), [1, 2, 3]),
    ):
        opts, _ = table.candidates(m, {}, "latency", None, 10, contexts)
        twin = candidates(cards, weights, m, {}, "latency", None, 10, contexts)
        assert twin is not None and sorted(twin[0]) == sorted(opts) == expect, contexts


def test_warp_uniform_loads_are_not_a_coalescing_problem() -> None:
    """FlagGems' repeat_interleave on the H200: each one-warp program reads its expert's
    count and offset once (one sector per request, a quarter of its bytes used: every
    lane reads the same 8 bytes).  The coalescing entry ranked first on those loads; it
    does not apply to them.  A kernel of narrow loads spread over sectors keeps it."""
    from pathlib import Path

    from kbopt.contracts.profile import Profile

    root = Path(__file__).resolve().parents[1]
    name = "flaggems_repeat_interleave--triton_v1--tokens_16384_topk_8_experts_256.md"
    text = (root / "benchmarks/real_profiles_blind19" / name).read_text(encoding="utf-8")
    ids = [o.id for o in recommend(text, language="triton", limit=20).opportunities]
    assert "coalesced-vectorized-global-access" not in ids
    profile = Profile.parse(text)
    spread = dict(profile.metrics, sectors_per_request=4.0)
    narrow = profile.model_copy(update={"measured": spread})
    ids = [o.id for o in recommend(narrow, language="triton", limit=20).opportunities]
    assert "coalesced-vectorized-global-access" in ids


def test_a_row_spread_one_element_per_thread_reads_as_too_many_warps() -> None:
    """FlagGems' quantile on the H200: a 128-wide group sorted by a 128-thread program (one
    element per thread, every compare-and-swap an exchange between threads).  The row
    length over the threads is derived when a profile lacks it, and the warps-to-the-row
    entry's narrow-row symptom reads it; a 4096-wide row over 256 threads is not that case."""
    from pathlib import Path

    from kbopt.contracts.profile import Profile
    from kbopt.ranking import trigger_metrics

    root = Path(__file__).resolve().parents[1]
    name = "flaggems_quantile--triton_v1--tokens_64_hidden_7168_group_128_quantiles_2.md"
    text = (root / "benchmarks/real_profiles_blind20" / name).read_text(encoding="utf-8")
    profile = Profile.parse(text)
    assert "row_elements_per_thread" not in profile.metrics  # written before the metric
    assert trigger_metrics(profile)["row_elements_per_thread"] == 1.0
    ids = [o.id for o in recommend(text, language="triton", limit=10).opportunities]
    assert "size-warps-to-the-row" in ids[:3]
    wide = profile.model_copy(update={"measured": dict(profile.metrics, row_len=4096.0)})
    assert trigger_metrics(wide)["row_elements_per_thread"] == 32.0
    ids = [o.id for o in recommend(wide, language="triton", limit=10).opportunities]
    assert "size-warps-to-the-row" not in ids


def test_launch_state_caching_needs_the_host_time_not_just_a_short_call() -> None:
    """FlagGems' batch norm at 7 x 7 on the H200: a 20 us call with 12% of it on the host.
    A short call is room for the launch-state entry, not its symptom: with the host share
    measured low it does not apply (its trigger once read `kernel_count >= 1`, which holds
    on every profile)."""
    from pathlib import Path

    from kbopt.contracts.profile import Profile

    root = Path(__file__).resolve().parents[1]
    name = "flaggems_batch_norm--triton_v1--batch_32_channels_2048_height_7_width_7.md"
    text = (root / "benchmarks/real_profiles_blind17" / name).read_text(encoding="utf-8")
    ids = [o.id for o in recommend(text, language="triton", limit=20).opportunities]
    assert "cache-per-shape-launch-state" not in ids
    profile = Profile.parse(text)
    host_bound = profile.model_copy(
        update={"measured": dict(profile.metrics, launch_overhead_pct=40.0)}
    )
    ids = [o.id for o in recommend(host_bound, language="triton", limit=20).opportunities]
    # Ranked near the top; the issue-bound entry (the kernel issues in over 60% of cycles)
    # comes first; more bytes in flight and vectorized access score near it (0.48, 0.44 vs 0.45).
    assert "cache-per-shape-launch-state" in ids[:4]


def test_torch_element_wise_launches_beside_the_kernel_call_for_a_fusion() -> None:
    """FlagGems' soft-margin loss on the H200: a zero-fill, the Triton sum, a division and a
    cast (three torch element-wise kernels beside the main one) in a 58 us call.  The count
    comes from the profile's kernel rows when it predates the metric; the fusion entry reads
    it as extra passes, where the bytes ratio alone did not show them."""
    from pathlib import Path

    from kbopt.contracts.profile import Profile
    from kbopt.ranking import elementwise_launches, trigger_metrics

    root = Path(__file__).resolve().parents[1]
    name = "flaggems_soft_margin_loss--triton_v1--images_4096_texts_4096.md"
    text = (root / "benchmarks/real_profiles_blind21" / name).read_text(encoding="utf-8")
    assert trigger_metrics(Profile.parse(text))["elementwise_launches"] == 3.0
    ids = [o.id for o in recommend(text, language="triton", limit=10).opportunities]
    assert "fuse-passes-over-global-memory" in ids[:3]
    names = ["void at::native::vectorized_elementwise_kernel<4, FillFunctor<float>>", "_sum"]
    assert elementwise_launches(names) == 1


def test_a_dropped_index_takes_its_cached_cards_and_table_with_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The ranking caches cards and tables per index object. Keyed by id(), an entry
    outlived its index, and a new index given the same id at the same version count was
    served another catalog's cards (an empty ranking, now and then, in the test suite)."""
    import gc
    import sys

    from kbopt import strategy

    monkeypatch.delenv("KBOPT_CACHE_DIR", raising=False)
    search = sys.modules["kbopt.search"]
    gc.collect()
    before = (len(strategy._CARD_CACHE), len(strategy._TABLE_CACHE))
    store = Store(small_kb(tmp_path / "kb"))
    assert recommend(profile(ctas_per_sm=0.25), store=store).opportunities
    assert (len(strategy._CARD_CACHE), len(strategy._TABLE_CACHE)) == (before[0] + 1, before[1] + 1)
    for key in [k for k, ix in search._INDEXES.items() if ix.store is store]:
        del search._INDEXES[key]
    del store
    gc.collect()
    assert (len(strategy._CARD_CACHE), len(strategy._TABLE_CACHE)) == before


def test_fp8_operands_are_not_recommended_to_a_kernel_already_on_8_bit_operands() -> None:
    """SGLang's fp8 GEMM at 98% of its floor: with the spec's operand bits in the profile
    (8), the FP8 entry is ruled out; at 16 bits it stays first, as before the metric."""
    import dataclasses

    from kbopt.kernel import load_spec

    repo = Path(__file__).resolve().parent.parent
    # What the fp8 GEMM's spec declares (matmul_dtype), on a bundled spec: the foreign one
    # needs the fetched SGLang source to load.
    bf16 = load_spec("mla_decode", repo)
    fp8 = dataclasses.replace(bf16, matmul_dtype="float8_e4m3fn")
    assert fp8.dim_metrics({"b": 32, "s": 1, "t": 4096})["matmul_operand_bits"] == 8
    assert "matmul_operand_bits" not in bf16.dim_metrics({"b": 32, "s": 1, "t": 4096})
    path = (
        repo
        / "benchmarks/real_profiles_blind38/sglang_scaled_mm--triton_v1--m_4096_n_4096_k_14336.md"
    )
    text = path.read_text(encoding="utf-8")
    assert "matmul_operand_bits" not in text  # profiled before the metric existed

    def top(bits: int) -> list[str]:
        row = f"| matmul_operand_bits | {bits} |\n| arithmetic_intensity |"
        profile = Profile.parse(text.replace("| arithmetic_intensity |", row, 1))
        strategy = recommend(profile, language="triton", store=Store(repo))
        return [o.id for o in strategy.opportunities]

    assert "fp8-tensor-core-attention" not in top(8)
    assert top(16)[0] == "fp8-tensor-core-attention"


def test_a_gate_the_kernel_does_not_state_counts_neither_for_nor_against() -> None:
    """A condition listed both as room to act and as defining, on a shape metric (the
    operands' bits): unstated, the entry scores as if it had no such condition; stated and
    holding, it earns a fact's credit; stated and failing, it rules the entry out.  The numpy
    table, the plain-Python twin and `evaluate` agree."""
    import dataclasses

    from kbopt.ranking import candidates, evaluate, metric_weights
    from kbopt.strategy import _Table

    symptom = [("tensor_core_util_pct", ">", 60.0)]
    gate = "matmul_operand_bits > 8"
    gated = dataclasses.replace(
        _card("gated", [*symptom, ("matmul_operand_bits", ">", 8.0)]),
        room=frozenset({gate}),
        defining=frozenset({gate}),
    )
    bare = _card("bare", symptom)
    weights = metric_weights([gated, bare])
    busy = {"tensor_core_util_pct": 90.0}

    def score(card: Any, m: dict[str, float]) -> float | None:
        found = evaluate(card, m, 0.0, "latency", weights)
        return None if found is None else found[0]

    assert score(gated, busy) == pytest.approx(score(bare, busy))  # unstated: no effect
    assert score(gated, {**busy, "matmul_operand_bits": 8.0}) is None  # 8-bit: ruled out
    stated = score(gated, {**busy, "matmul_operand_bits": 16.0})
    assert stated is not None and 0 < stated < score(bare, busy)  # a fact's partial credit
    for m, eligible in ((busy, True), ({**busy, "matmul_operand_bits": 8.0}, False)):
        opts, _ = _Table([gated]).candidates(m, {}, "latency", None, 10)
        twin = candidates([gated], metric_weights([gated]), m, {}, "latency", None, 10)
        assert twin is not None and twin[0] == opts
        assert (opts == [0]) is eligible


def test_one_more_stage_is_not_proposed_where_shared_memory_has_no_room() -> None:
    """SGLang's 32-row fp8 GEMM holds 144 KB of shared memory per block at three stages
    (one CTA per SM): one stage more is not among its opportunities, while the warning about
    oversized tiles stays; below 100 KB the same profile gets it again."""
    repo = Path(__file__).resolve().parent.parent
    path = (
        repo
        / "benchmarks/real_profiles_blind38/sglang_scaled_mm--triton_v1--m_32_n_28672_k_4096.md"
    )
    text = path.read_text(encoding="utf-8")
    assert "| shared_mem_per_block_kb | 144" in text

    def ranked(profile_text: str) -> tuple[list[str], list[str]]:
        s = recommend(Profile.parse(profile_text), language="triton", store=Store(repo))
        return [o.id for o in s.opportunities], [w.id for w in s.warnings]

    opportunities, warnings = ranked(text)
    assert "triton-num-stages-software-pipelining" not in opportunities
    assert "oversized-tiles-kill-occupancy" in warnings
    roomy, _ = ranked(
        text.replace("| shared_mem_per_block_kb | 144", "| shared_mem_per_block_kb | 64")
    )
    assert "triton-num-stages-software-pipelining" in roomy


def test_too_many_splits_is_not_warned_of_where_the_grid_leaves_sms_idle() -> None:
    # A split decode over a short context whose grid, splits included, fills under 0.8 of
    # the SMs needs more splits, not fewer: the catalog's too-many-splits trap is ruled out
    # there (its `ctas_per_sm >= 0.8` is defining), and still warned of on a full grid.
    from kbopt.ranking import evaluate, metric_weights
    from kbopt.strategy import catalog_cards

    cards = catalog_cards(Store(Path(__file__).resolve().parent.parent))
    weights = metric_weights(cards)
    trap = next(c for c in cards if c.name == "too-many-kv-splits")
    short = {"kv_len": 1024.0, "num_splits": 8.0}
    assert evaluate(trap, {**short, "ctas_per_sm": 0.24}, 0.3, "latency", weights) is None
    assert evaluate(trap, {**short, "ctas_per_sm": 3.0}, 0.3, "latency", weights) is not None
