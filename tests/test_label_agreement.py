"""scripts/label_agreement.py: the draw for a second labeller, and how both are scored."""

from __future__ import annotations

import json
from pathlib import Path

from script_module import load_script

REPO = Path(__file__).resolve().parent.parent


def test_the_draw_takes_one_profile_per_kernel_and_repeats_with_its_seed() -> None:
    mod = load_script("label_agreement")
    keys = [f"set{s}/k{k}--triton_v1--c{c}.md" for s in range(3) for k in range(12) for c in (1, 2)]
    chosen = mod.draw(keys, 5, seed=7)
    assert len(chosen) == 5
    assert len({mod.kernel_of(k) for k in chosen}) == 5
    assert chosen == mod.draw(list(reversed(keys)), 5, seed=7)  # order of discovery is moot
    assert chosen != mod.draw(keys, 5, seed=8)
    # a later draw leaves out the kernels drawn before
    more = mod.draw(keys, 5, seed=8, exclude=frozenset(mod.kernel_of(k) for k in chosen))
    assert not {mod.kernel_of(k) for k in more} & {mod.kernel_of(k) for k in chosen}


def test_a_second_engineer_is_scored_as_the_ranking_is() -> None:
    mod = load_script("label_agreement")
    first = {"expected": ["a", "b"]}
    second = {"expected": ["c"], "then": ["b", "d"]}
    row = mod.score_row("s/k.md", first, second, ranked=["b", "c", "x", "y"])
    assert row["second_moves"] == ["c", "b", "d"]
    assert not row["second_top1_hit"]  # c is not among the first labeller's
    assert row["second_top3_hit"]  # b, the second move, is
    assert not row["second_accepts_first_any"]
    assert row["catalog_top1_vs_first"] and row["catalog_top3_vs_first"]
    assert not row["catalog_top1_vs_second"] and row["catalog_top3_vs_second"]
    # an anti-pattern labelled counts when it is among the first three warnings, as in
    # scripts/hit_rate.py
    warned = mod.score_row("s/k.md", {"expected": ["w"]}, second, ["x", "y", "z"], ["q", "w"])
    assert warned["catalog_top3_vs_first"] and not warned["catalog_top1_vs_first"]
    # a first move repeated in "then" counts once
    assert mod.moves({"expected": ["a"], "then": ["a", "b"]}) == ["a", "b"]


def test_the_committed_draw_names_labelled_profiles_one_per_kernel() -> None:
    mod = load_script("label_agreement")
    sample = json.loads((REPO / "benchmarks/second_labels/sample.json").read_text())
    first = mod.first_labels()
    assert all(k in first for k in sample["profiles"])
    assert len({mod.kernel_of(k) for k in sample["profiles"]}) == len(sample["profiles"])
    assert sorted(k for d in sample["draws"] for k in d["profiles"]) == sample["profiles"]


def test_a_draw_of_no_kernels_or_more_than_are_left_is_refused(capsys) -> None:  # type: ignore[no-untyped-def]
    mod = load_script("label_agreement")
    before = (REPO / "benchmarks/second_labels/sample.json").read_text()
    assert mod.main(["sample", "--n", "0"]) == 2
    assert mod.main(["sample", "--more", "--n", "100000"]) == 2
    assert "labelled kernels are left to draw" in capsys.readouterr().err
    assert (REPO / "benchmarks/second_labels/sample.json").read_text() == before


def test_a_tally_counts_each_scored_fact_over_its_rows() -> None:
    mod = load_script("label_agreement")
    second = {"expected": ["a"], "then": ["b"]}
    rows = [
        mod.score_row("s/k.md", {"expected": ["a"]}, second, ["a"]),
        mod.score_row("s/j.md", {"expected": ["b"]}, second, ["x"]),
    ]
    t = mod.tally(rows)
    assert t["profiles"] == 2
    assert t["second_top1_hit"] == 1 and t["second_top3_hit"] == 2
    assert t["catalog_top3_vs_first"] == 1 and t["catalog_top3_vs_second"] == 1
