"""kbopt.workflow.move_record: what each catalog move found, and the order it gives."""

from __future__ import annotations

import json
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from kbopt.kernel import load_spec
from kbopt.store import Store
from kbopt.workflow.move_record import (
    MoveRecord,
    candidate_key,
    order_by_record,
    parse_move,
    place_pair,
    record_band,
    record_for,
    trial_outcomes,
)

REPO = Path(__file__).resolve().parent.parent


def test_move_texts_name_their_source_entry_changes_and_preconditions() -> None:
    assert parse_move(
        "#1 keep-enough-bytes-in-flight: block_size None (launched as 8192) -> 16384 (tile_n x2)"
    ) == {
        "source": "ranked first",
        "entry": "keep-enough-bytes-in-flight",
        "changes": ["tile_n x2"],
        "paired": False,
        "relaxed": False,
    }
    moved = parse_move(
        "back at trial 15's values, #3 keep-enough-bytes-in-flight, warps alongside: "
        "block_d 64 -> 128 (tile_n x2), num_warps 4 -> 8 (warps x2)"
    )
    assert moved["source"] == "ranked lower" and moved["paired"]
    assert moved["changes"] == ["tile_n x2", "warps x2"]
    fired = parse_move(
        "from the best so far, warning 1 wave-quantization-from-coarse-tiles: "
        "block_size 32768 -> 16384 (tile_n /2)"
    )
    assert fired["source"] == "fired anti-pattern"
    assert fired["entry"] == "wave-quantization-from-coarse-tiles"
    # the passed-over preconditions' own parentheses are not knob changes
    unranked = parse_move(
        "unranked size-warps-to-the-row: num_warps 2 -> 1 (warps /2) "
        "[preconditions not met: the kernel has no row_len (row_len_x y)]"
    )
    assert unranked["source"] == "unranked" and unranked["changes"] == ["warps /2"]
    assert unranked["relaxed"]
    random_order = parse_move("split-kv-decode: num_splits 8 -> 33 (splits one_wave)")
    assert random_order["source"] == "random order"
    assert random_order["changes"] == ["splits one_wave"]
    reopened = parse_move(
        "rolled back before, tried again from the best values, #5 grow-gemm-tiles-for-"
        "operand-reuse: block_m None (launched as 128) -> 256 (tile_m x2)"
    )
    assert reopened["source"] == "ranked lower"
    assert reopened["entry"] == "grow-gemm-tiles-for-operand-reuse"


def _trial(n: int, us: float | None, move: str = "") -> dict[str, Any]:
    return {"n": n, "status": "ok" if us else "error", "duration_us": us, "move": move}


def _doc(kernel: str, *moves: tuple[str, float | None], arm: str = "catalog") -> dict[str, Any]:
    trajectory = [_trial(1, 100.0)] + [
        _trial(i, us, move) for i, (move, us) in enumerate(moves, start=2)
    ]
    return {
        "kind": "kbopt-ablation",
        "fake": False,
        "kernel": kernel,
        "config": {"name": "c"},
        "rows": [{"arm": arm, "trajectory": trajectory}, {"arm": "grid", "trajectory": []}],
    }


WIDER = "#1 e: block 8 -> 16 (tile_n x2)"
FEWER = "#2 e: num_warps 4 -> 2 (warps /2)"


def test_the_record_counts_advancing_trials_per_move_and_scores_toward_the_base_rate() -> None:
    docs = [
        _doc("a", (WIDER, 90.0), (FEWER, 89.5)),  # the second: not 1% past the best (90)
        _doc("b", (WIDER, 120.0), (FEWER, 80.0), arm="random"),
    ]
    rows = trial_outcomes(docs)
    record = MoveRecord.from_rows(rows)
    assert record.counts == {("e", "tile_n x2", False): (2, 1), ("e", "warps /2", False): (2, 1)}
    assert record.base_rate == 0.5 and record.runs == 2
    assert record.score(("e", "tile_n x2", False)) == pytest.approx(0.5)
    assert record.score(("never", "measured", False)) == 0.5  # the base rate
    # without kernel b: what a search knew before it met b
    alone = MoveRecord.from_rows(rows, leave_out_kernel="b")
    assert alone.counts == {("e", "tile_n x2", False): (1, 1), ("e", "warps /2", False): (1, 0)}
    assert alone.score(("e", "tile_n x2", False)) == pytest.approx((1 + 4 * 0.5) / 5)


def test_the_record_keeps_each_move_per_wave_band_of_the_values_it_moved_from() -> None:
    # WIDER moves from a grid under one wave (0.5 programs per SM) and advances, then from
    # one of many waves (12 per SM) and does not; FEWER the other way round.
    doc = _doc("a", (WIDER, 90.0), (FEWER, 89.9), (WIDER, 95.0), (FEWER, 80.0))
    trajectory = doc["rows"][0]["trajectory"]
    for trial, ctas in zip(trajectory[1:], (0.5, 0.5, 12.0, 12.0), strict=True):
        trial["from_metrics"] = {"ctas_per_sm": ctas}
    rows = trial_outcomes([doc])
    assert [r["from_waves"] for r in rows] == [
        "under one wave",
        "under one wave",
        "four waves or more",
        "four waves or more",
    ]
    record = MoveRecord.from_rows(rows)
    wide, few = ("e", "tile_n x2", False), ("e", "warps /2", False)
    assert record.banded[(wide, "under one wave")] == (1, 1)
    assert record.banded[(wide, "four waves or more")] == (1, 0)
    # the pooled score where the band is not known, or never measured for the move
    assert record.score(wide) == record.score(wide, {}) == record.score(few)
    assert record.score(wide, {"ctas_per_sm": 2.0}) == record.score(wide)
    # within a band, the band's trials pulled toward the pooled score
    pooled = record.score(wide)
    assert record.score(wide, {"ctas_per_sm": 0.25}) == pytest.approx((1 + 8 * pooled) / 9)
    assert record.score(wide, {"ctas_per_sm": 0.25}) > record.score(few, {"ctas_per_sm": 0.25})
    assert record.score(wide, {"ctas_per_sm": 40}) < record.score(few, {"ctas_per_sm": 40})
    ranked = [_candidate("e", "warps /2"), _candidate("e", "tile_n x2")]
    under = order_by_record(ranked, record, {"ctas_per_sm": 0.25})
    assert [c.planned.changes[0].op for c in under] == ["x2", "/2"]
    many = order_by_record(ranked, record, {"ctas_per_sm": 40})
    assert [c.planned.changes[0].op for c in many] == ["/2", "x2"]
    # runs whose trials did not record the metrics they moved from count pooled only
    assert MoveRecord.from_rows(trial_outcomes([_doc("b", (WIDER, 90.0))])).banded == {}


def test_the_band_marks_the_register_ceiling_and_kernels_that_reuse_what_they_load() -> None:
    many = {"ctas_per_sm": 12.0}
    assert record_band(many) == "four waves or more"
    assert record_band({**many, "registers_per_thread": 224}) == (
        "four waves or more, 224 registers or more"
    )
    assert record_band({**many, "registers_per_thread": 223, "arithmetic_intensity": 3.9}) == (
        "four waves or more"
    )
    assert record_band({**many, "arithmetic_intensity": 4.0}) == (
        "four waves or more, 4 flops a byte or more"
    )
    both = {**many, "registers_per_thread": 255, "arithmetic_intensity": 300.0}
    assert record_band(both) == "four waves or more, 224 registers or more, 4 flops a byte or more"
    # lines moved or left out, as scripts/record_conditioning.py compares them
    assert record_band(both, ceiling=None, reuse=None) == "four waves or more"
    assert record_band(both, ceiling=None, reuse=500.0) == "four waves or more"
    # no wave band, no band, whatever else was measured
    assert record_band({"arithmetic_intensity": 300.0}) is None
    # the trial rows keep what the band is made from
    doc = _doc("a", (WIDER, 90.0))
    doc["rows"][0]["trajectory"][1]["from_metrics"] = {**both, "row_len": 4096}
    (row,) = trial_outcomes([doc])
    assert row["from_band_metrics"] == both
    assert row["from_band"] == record_band(both)


def _candidate(entry: str, change: str, warning: bool = False) -> SimpleNamespace:
    role, op = change.split()
    planned = SimpleNamespace(changes=[SimpleNamespace(role=role, op=op)], relaxed=[])
    return SimpleNamespace(entry=entry, planned=planned, opp={"warning": 1} if warning else {})


def test_fired_anti_patterns_first_then_the_record_s_order_then_the_ranking_s() -> None:
    record = MoveRecord(
        {("good", "warps /2", False): (10, 8), ("poor", "tile_n x2", False): (10, 0)}, 0.3
    )
    ranked = [
        _candidate("poor", "tile_n x2"),
        _candidate("unknown-1", "tile_m x2"),
        _candidate("good", "warps /2"),
        _candidate("unknown-2", "tile_k x2"),
        _candidate("fired", "tile_n /2", warning=True),
    ]
    assert candidate_key("good", ranked[2].planned) == ("good", "warps /2", False)
    order = [c.entry for c in order_by_record(ranked, record)]
    assert order == ["fired", "good", "unknown-1", "unknown-2", "poor"]
    # an empty record keeps the ranking's order, fired anti-patterns first
    assert [c.entry for c in order_by_record(ranked, MoveRecord())] == [
        "fired",
        "poor",
        "unknown-1",
        "good",
        "unknown-2",
    ]


def test_the_catalog_search_orders_its_moves_by_the_record(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """size-warps-to-the-row's two moves, both passed over: the record decides which first."""
    from kbopt.workflow.catalog_designer import search_candidates

    spec = load_spec("add_rmsnorm", REPO)
    store = Store(REPO)
    ranked = [{"id": "size-warps-to-the-row", "kind": "optimization", "score": 0.5}]
    values = {**spec.knob_values("triton_v1"), "num_warps": 16}
    metrics = {"row_len": 14336, "registers_per_thread": 91}

    def first_with(record: MoveRecord) -> Any:
        monkeypatch.setattr("kbopt.workflow.catalog_designer.record_for", lambda root: record)
        found = search_candidates(store, spec, "triton_v1", ranked, metrics, values=values)
        return found[0].planned.values["num_warps"]

    entry = "size-warps-to-the-row"
    halve = MoveRecord(
        {(entry, "warps /2", True): (20, 10), (entry, "warps x2", True): (20, 1)}, 0.2
    )
    double = MoveRecord(
        {(entry, "warps /2", True): (20, 1), (entry, "warps x2", True): (20, 10)}, 0.2
    )
    assert first_with(halve) == 8
    assert first_with(double) == 32
    # the same pooled record, kept apart by wave band: the current values' band decides
    banded = MoveRecord(
        {(entry, "warps /2", True): (20, 5), (entry, "warps x2", True): (20, 5)},
        0.2,
        banded={
            ((entry, "warps /2", True), "under one wave"): (10, 0),
            ((entry, "warps x2", True), "under one wave"): (10, 5),
            ((entry, "warps /2", True), "four waves or more"): (10, 5),
            ((entry, "warps x2", True), "four waves or more"): (10, 0),
        },
    )
    metrics["ctas_per_sm"] = 0.5
    assert first_with(banded) == 32
    metrics["ctas_per_sm"] = 16
    assert first_with(banded) == 8


def test_the_record_is_read_again_when_a_results_file_changes(tmp_path: Path) -> None:
    folder = tmp_path / "results" / "ablation"
    folder.mkdir(parents=True)
    assert record_for(tmp_path).counts == {}
    (folder / "one.json").write_text(json.dumps(_doc("a", (WIDER, 90.0))))
    assert record_for(tmp_path).counts == {("e", "tile_n x2", False): (1, 1)}
    fake = {**_doc("b", (WIDER, 120.0)), "fake": True}  # fake-backend runs are left out
    (folder / "two.json").write_text(json.dumps(fake))
    assert record_for(tmp_path).counts == {("e", "tile_n x2", False): (1, 1)}


def test_show_moves_prints_each_move_s_record(kb_copy: Path, capsys: pytest.CaptureFixture) -> None:
    """`kbopt show ENTRY --moves` adds what the project's ablations found per declared move."""
    from kbopt.cli import main

    entry = "size-warps-to-the-row"
    folder = kb_copy / "results" / "ablation"
    folder.mkdir(parents=True)
    halve = f"#1 {entry}: num_warps 8 -> 4 (warps /2)"
    doubled = f"unranked {entry}: num_warps 4 -> 8 (warps x2) [preconditions not met: x]"
    doc = _doc("k", (halve, 90.0), (halve, 95.0), (doubled, 80.0))
    (folder / "one.json").write_text(json.dumps(doc))
    assert main(["--root", str(kb_copy), "show", entry, "--moves", "--json"]) == 0
    rows = json.loads(capsys.readouterr().out)["measured_moves"]
    assert [(r["held"], r["passed_over"]) for r in rows] == [
        ({"trials": 2, "advanced": 1}, {"trials": 0, "advanced": 0}),
        ({"trials": 0, "advanced": 0}, {"trials": 1, "advanced": 1}),
    ]
    assert main(["--root", str(kb_copy), "show", entry, "--moves"]) == 0
    text = capsys.readouterr().out
    assert "preconditions held: advanced in 1 of 2 trials; passed over: not measured" in text
    assert main(["--root", str(kb_copy), "show", entry, "--json"]) == 0
    assert "measured_moves" not in json.loads(capsys.readouterr().out)


PAIR = "#1 e, warps alongside: block 8 -> 16 (tile_n x2), num_warps 4 -> 8 (warps x2)"


def test_the_warps_alongside_are_counted_apart_and_placed_by_their_record() -> None:
    rows = trial_outcomes([_doc("a", (WIDER, 90.0), (PAIR, 120.0), (PAIR, 95.0), (FEWER, 80.0))])
    record = MoveRecord.from_rows(rows)
    assert record.paired == (2, 0)  # neither beat 90
    assert ("e", "tile_n x2 + warps x2", False) not in record.counts
    assert record.base_rate == 1.0 and record.summary()["paired"] == {"trials": 2, "advanced": 0}
    assert record.pair_score() == pytest.approx(4 / 6)
    scores = {"high": 0.9, "low": 0.5, "fired": None}
    others = ["fired", "high", "low"]
    assert place_pair("pair", others, record, scores.get) == ["fired", "high", "pair", "low"]
    # a project without measured runs: the pair comes next, as the search always did
    assert place_pair("pair", others, MoveRecord(), scores.get) == ["pair", *others]
    assert place_pair("pair", ["high"], record, scores.get) == ["high", "pair"]


def test_the_catalog_walk_places_the_pair_by_the_record(monkeypatch: pytest.MonkeyPatch) -> None:
    """Behind the moves whose record scores higher; a fired anti-pattern's way out stays
    ahead whatever its record."""
    from kbopt.bench.backend import FakeBackend
    from kbopt.bench.trials import TrialConfig
    from kbopt.workflow.ablation import CatalogWalk, Lab, _row
    from kbopt.workflow.catalog_designer import Candidate

    spec = load_spec("add_rmsnorm", REPO)
    cfg = TrialConfig.from_dict({"name": "large", "dims": {"rows": 8192, "hidden": 4096}})
    values = spec.knob_values("triton_v1")
    lab = Lab(FakeBackend(REPO), spec, "triton_v1", cfg, values)
    start_m, err = lab.measure(values)
    assert start_m is not None
    walk = CatalogWalk(
        lab, _row(1, values, start_m, err), start_m, store=Store(REPO), language="triton", spec=spec
    )
    rest = []
    for name, opp in (("fired", {"warning": 1}), ("good", {}), ("poor", {})):
        planned = SimpleNamespace(changes=[], relaxed=[])
        walk._candidates[id(planned)] = Candidate(name, 0, 1, planned, {"id": name, **opp}, False)
        rest.append((name, planned))
    counts = {(name, "", False): (10, 9 if name == "good" else 0) for name, _ in rest}
    record = MoveRecord(counts, 0.3, 3, (10, 2))
    monkeypatch.setattr("kbopt.workflow.ablation.record_for", lambda root: record)
    placed = walk.place_pair(("pair", SimpleNamespace()), rest)
    assert [name for name, _ in placed] == ["fired", "good", "pair", "poor"]


def test_each_row_carries_the_rule_that_placed_its_move_when_the_run_recorded_it() -> None:
    doc = _doc("a", (WIDER, 90.0), (FEWER, 80.0))
    trials = doc["rows"][0]["trajectory"]
    trials[2]["momentum"] = "push on"
    rows = trial_outcomes([doc])
    assert [r["momentum"] for r in rows] == [None, "push on"]  # None: not recorded


def test_a_row_says_whether_every_change_had_lost_badly_earlier_in_the_arm() -> None:
    # tile_n x2 runs 60% slower than the best (100): a later tile_n x2 repeats a bad loss; a
    # 40% loss (warps /2) marks nothing
    doc = _doc("a", (WIDER, 160.0), (FEWER, 140.0), (WIDER, 99.0), (FEWER, 98.0))
    rows = trial_outcomes([doc])
    assert [r["repeats_a_bad_loss"] for r in rows] == [False, False, True, False]
    other_arm = _doc("b", (WIDER, 160.0), arm="random")["rows"][0]
    doc["rows"].insert(0, other_arm)  # another arm's bad loss does not count in this one
    assert [r["repeats_a_bad_loss"] for r in trial_outcomes([doc])][1:] == [
        False,
        False,
        True,
        False,
    ]


def test_a_row_carries_how_close_to_its_floor_the_values_it_moved_from_ran() -> None:
    doc = _doc("a", (WIDER, 90.0), (FEWER, 80.0))
    doc["rows"][0]["trajectory"][1]["from_metrics"] = {"pct_of_floor": 72.5}
    rows = trial_outcomes([doc])
    assert [r["from_pct_of_floor"] for r in rows] == [72.5, None]  # None: not recorded


def test_a_row_carries_how_much_slower_than_the_best_its_move_started() -> None:
    """Kept moves move the walk, rolled-back ones leave it; a move that says it starts from
    the best or from an earlier trial starts there."""
    doc = _doc(
        "a",
        (WIDER, 103.0),  # kept, 3% slower than the start (the best)
        (FEWER, 120.0),  # from 103: rolled back
        ("from the best so far, " + FEWER, 90.0),  # from the best (100): kept, the new best
        (WIDER, 99.0),  # from 90: rolled back
        ("back at trial 2's values, " + FEWER, 101.0),  # from 103
    )
    trials = doc["rows"][0]["trajectory"]
    for trial, kept in zip(trials, [True, True, False, True, False, True], strict=True):
        trial["kept"] = kept
    rows = trial_outcomes([doc])
    assert [r["from_below_best_pct"] for r in rows] == [0.0, 3.0, 0.0, 0.0, 14.44]
    for trial in trials:
        del trial["kept"]  # a run made before the trials recorded it: unknown, unless the
        # move says where it started
    rows = trial_outcomes([doc])
    assert [r["from_below_best_pct"] for r in rows] == [None, None, 0.0, None, 14.44]
