"""scripts/first_moves_measured.py: the labelled move and the catalog's first, both timed."""

from __future__ import annotations

import json
from pathlib import Path

from script_module import load_script


def test_a_move_text_names_its_entry_and_the_values_it_moved_from() -> None:
    mod = load_script("first_moves_measured")
    assert mod.move_entry(
        "#2 keep-enough-bytes-in-flight: block_n None (launched as 128) -> 256 (tile_n x2)"
    ) == ("keep-enough-bytes-in-flight")
    assert (
        mod.move_entry("back at trial 4's values, warning 1 wave-q: a 2 -> 1 (tile_m /2)")
        == "wave-q"
    )
    assert (
        mod.move_entry("unranked grow, warps alongside: a 2 -> 4 (tile_m x2), w 2 -> 4 (warps x2)")
        == "grow"
    )
    assert mod.moved_knobs(
        "#1 g: a None (launched as 2) -> 4 (tile_m x2), w 2 -> 4 (warps x2)"
    ) == {
        "a": "None",
        "w": "2",
    }
    start = {"a": None, "w": 2, "s": 3}
    # from the start: only the named knobs changed, each from the start's value
    assert mod.from_start(
        {
            "values": {"a": 4, "w": 2, "s": 3},
            "move": "#1 g: a None (launched as 2) -> 4 (tile_m x2)",
        },
        start,
    )
    # a second doubling moved from 4, not from the start, though only `a` differs
    assert not mod.from_start(
        {"values": {"a": 8, "w": 2, "s": 3}, "move": "#1 g: a 4 -> 8 (tile_m x2)"}, start
    )
    # another knob had moved before
    assert not mod.from_start(
        {"values": {"a": 4, "w": 2, "s": 4}, "move": "#1 g: a None -> 4 (tile_m x2)"}, start
    )


def test_held_out_kernels_compare_the_first_labelled_try_with_the_catalog_s_first(
    tmp_path: Path,
) -> None:
    mod = load_script("first_moves_measured")
    (tmp_path / "benchmarks/real_profiles_blind7").mkdir(parents=True)
    (tmp_path / "benchmarks/ablation-blind7.txt").write_text(
        "k/spec.py --config n=8 --budget-s 60\n"
    )
    labels = {"profiles": {"k--triton_v1--n_8.md": {"expected": ["lab"]}}}
    (tmp_path / "benchmarks/real_profiles_blind7/labels.json").write_text(json.dumps(labels))
    results = tmp_path / "results/ablation"
    results.mkdir(parents=True)

    def t(n: int, us: float, values: dict, move: str = "") -> dict:
        return {"n": n, "status": "ok", "duration_us": us, "values": values, "move": move}

    doc = {
        "kind": "kbopt-ablation",
        "kernel": "k",
        "spec": "k/spec.py",
        "fake": False,
        "command": "kbopt ablate k/spec.py --config n=8 --budget-s 60",
        "config": {"name": "n8", "dims": {"n": 8}},
        "start_us": 100.0,
        "best_us_any_arm": 50.0,
        "rows": [
            {
                "arm": "catalog",
                "trajectory": [
                    t(1, 100.0, {"a": 1, "b": 1}),
                    t(2, 110.0, {"a": 2, "b": 1}, "#1 other: a 1 -> 2 (tile_m x2)"),
                    t(3, 80.0, {"a": 1, "b": 2}, "#2 lab: b 1 -> 2 (warps x2)"),
                    t(
                        4, 60.0, {"a": 1, "b": 4}, "#2 lab: b 2 -> 4 (warps x2)"
                    ),  # not from the start
                ],
            },
            {
                "arm": "random",
                "trajectory": [
                    t(1, 100.0, {"a": 1, "b": 1}),
                    t(2, 70.0, {"a": 1, "b": 2}, "lab: b 1 -> 2 (warps x2)"),
                ],
            },
            {
                "arm": "grid",
                "trajectory": [t(1, 100.0, {"a": 1, "b": 1}), t(2, 50.0, {"a": 4, "b": 4})],
            },
        ],
    }
    (results / "20261206T000000Z-k-GPU.json").write_text(json.dumps(doc))
    [row] = mod.kernel_rows(tmp_path)
    assert row["catalog_first_entry"] == "other" and round(row["catalog_first_gain_pct"], 1) == -9.1
    # the catalog arm's first labelled try from the start, not the random order's faster one
    assert row["label_arm"] == "catalog" and round(row["label_gain_pct"], 1) == 25.0
    s = mod.summarize([row])
    assert (s["compared"], s["label_better"], s["catalog_better"]) == (1, 1, 0)


def test_labels_of_lines_profiled_later_keep_their_set_s_number(tmp_path: Path) -> None:
    mod = load_script("first_moves_measured")
    for folder, name in (
        ("real_profiles_blind56", "k--triton_v1--n_1.md"),
        ("real_profiles_blind56b", "k--triton_v1--n_2.md"),
        ("real_profiles_blindx", "k--triton_v1--n_3.md"),
    ):
        path = tmp_path / "benchmarks" / folder / "labels.json"
        path.parent.mkdir(parents=True)
        path.write_text(json.dumps({"profiles": {name: {"expected": ["some-entry"]}}}))
    assert mod.labels_by_profile(tmp_path) == {
        (56, "k", "n_1"): ["some-entry"],
        (56, "k", "n_2"): ["some-entry"],
    }
