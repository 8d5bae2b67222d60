"""scripts/move_outcomes.py: the ablation's moves, counted by kind."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

from script_module import load_script

REPO = Path(__file__).resolve().parent.parent


def test_a_trial_is_judged_against_its_arm_s_best_so_far() -> None:
    mod = load_script("move_outcomes")

    def trial(n: int, us: float | None, move: str = "") -> dict:
        ok = us is not None
        return {"n": n, "status": "ok" if ok else "error", "duration_us": us, "move": move}

    doc = {
        "kernel": "k",
        "config": {"name": "c"},
        "_file": "results/ablation/x.json",
        "rows": [
            {
                "arm": "catalog",
                "trajectory": [
                    trial(1, 100.0),
                    trial(2, 90.0, "warning 1 w: a 2 -> 1 (tile_n /2)"),  # 10% faster
                    trial(
                        3, 89.5, "#1 o: b 1 -> 2 (warps x2) [preconditions not met: x > 1]"
                    ),  # < 1%
                    trial(4, None, "#2 o: a 1 -> 2 (tile_n x2)"),  # failed: not advanced
                    trial(5, 80.0, "#1 o: b 2 -> 4 (warps x2)"),  # against 89.5, not 100
                ],
            },
            {"arm": "grid", "trajectory": [trial(1, 100.0), trial(2, 50.0, "")]},
        ],
    }
    rows = mod.trial_outcomes([doc, {**doc, "_file": "results/ablation/y.json"}])
    assert len(rows) == 8  # the grid's trials are not moves
    assert [r["first_run"] for r in rows] == [True] * 4 + [False] * 4
    assert [r["gain_pct"] for r in rows[:4]] == [10.0, 0.56, None, 10.61]
    assert [r["relaxed"] for r in rows[:4]] == [False, True, False, False]
    by_source = {t["group"]: t for t in mod.tally(rows, lambda r: r["source"])}
    assert by_source["fired anti-pattern"]["advanced"] == 2
    assert by_source["ranked first"] == {
        "group": "ranked first",
        "trials": 4,
        "advanced": 2,
        "advanced_pct": 50.0,
        "clear": 2,
        "clear_pct": 50.0,
    }


def test_the_script_writes_its_tables_and_answers_help(tmp_path: Path) -> None:
    script = REPO / "scripts" / "move_outcomes.py"
    for args, code in ((["--help"], 0), (["--bogus"], 2)):
        run = subprocess.run([sys.executable, str(script), *args], capture_output=True, text=True)
        assert run.returncode == code, run.stderr
    run = subprocess.run(
        [sys.executable, str(script), "--out", str(tmp_path)], capture_output=True, text=True
    )
    assert run.returncode == 0, run.stderr
    doc = json.loads((tmp_path / "move-outcomes.json").read_text())
    assert doc["runs"] > 0 and doc["trials"] > 0 and doc["command"].startswith("python ")
    assert "first move of each run (trial 2), by source" in doc["tables"]
    assert "| fired anti-pattern |" in (tmp_path / "move-outcomes.md").read_text()
    assert "**Smaller reduction tile**" in (tmp_path / "move-outcomes.md").read_text()
    assert {r["role"] for r in doc["reduction_tile"]} == {"tile_k", "kv_tile"}
    assert set(doc["first_move_duel"]) == {
        "every other kernel's runs",
        "other kernels' earlier runs only",
    }


def test_first_moves_are_scored_by_the_other_kernels_record() -> None:
    mod = load_script("move_outcomes")

    def run(kernel: str, catalog: tuple[str, float], random_: tuple[str, float]) -> dict:
        def arm(name: str, move: str, us: float) -> dict:
            start = {"n": 1, "status": "ok", "duration_us": 100.0, "move": ""}
            step = {"n": 2, "status": "ok", "duration_us": us, "move": move}
            return {"arm": name, "trajectory": [start, step]}

        rows = [arm("catalog", *catalog), arm("random", *random_)]
        return {"kernel": kernel, "config": {"name": "c"}, "_file": kernel, "rows": rows}

    wide, few = "#1 e: b 8 -> 16 (tile_n x2)", "f: w 4 -> 2 (warps /2)"
    # on every kernel the catalog arm's wider tile lost and the random order's halving won
    docs = [run(k, (wide, 120.0), (few, 80.0)) for k in ("a", "b", "c")]
    rows = mod.trial_outcomes(docs)
    every = mod.first_move_duel(rows, past_only=False)
    # each kernel sees the two others: the halving scores higher, and advanced
    assert every == {
        "compared": 3,
        "the higher-scored move advanced": 3,
        "the catalog arm's move advanced": 0,
        "the random order's move advanced": 3,
        "the higher-scored move was the catalog arm's": 0,
    }
    # from earlier runs only: a knows nothing yet (both moves at the base rate)
    past = mod.first_move_duel(rows, past_only=True)
    assert past == {
        "scored alike": 1,
        "compared": 2,
        "the higher-scored move advanced": 2,
        "the catalog arm's move advanced": 0,
        "the random order's move advanced": 2,
        "the higher-scored move was the catalog arm's": 0,
    }


def test_the_warps_alongside_are_set_against_moves_at_the_same_position() -> None:
    mod = load_script("move_outcomes")

    def row(arm: str, n: int, gain: float, paired: bool = False) -> dict:
        return {"arm": arm, "n": n, "gain_pct": gain, "changes": ["tile_n x2"], "paired": paired}

    rows = [
        row("catalog", 3, 10.0),
        row("catalog", 3, 0.0),  # trial 3 of the catalog arm: half advanced
        row("catalog", 9, 0.0),  # trial 9: none
        row("catalog", 3, 0.0, paired=True),
        row("catalog", 9, 5.0, paired=True),
        row("random", 4, 0.0, paired=True),  # no other move at that position: left out
    ]
    assert mod.pairing_against_position(rows) == {
        "trials": 2,
        "advanced": 1,
        "expected_at_the_same_position": 0.5,
    }


def test_register_moves_are_split_by_whether_the_start_spilled() -> None:
    mod = load_script("move_outcomes")
    spilled = {"source": "results/profiles/h100-blind53/sglang_kda_cumsum--triton_v1--seqs_1_seqlen_8192_heads_32_head_dim_128_chunk_64.json"}  # fmt: skip
    clean = {"source": "results/profiles/h100-blind52/vllm_bi_matmul--triton_v1--tokens_2048_out_4096_hidden_12288.json"}  # fmt: skip
    docs = [
        {"_file": "a.json", "kernel": "sglang_kda_cumsum", "start_profile": spilled},
        {"_file": "b.json", "kernel": "vllm_bi_matmul", "start_profile": clean},
        {"_file": "c.json", "kernel": "nowhere", "config": {"dims": {"n": 1}}},
    ]
    assert mod.spills_at_the_start(docs) == {
        "a.json": "start spilled",
        "b.json": "start did not spill",
        "c.json": "start not profiled",
    }
    row = {"arm": "random", "n": 2, "entry": "triton-register-budget-num-warps-maxnreg",
           "changes": ["warps x2"], "paired": False, "relaxed": False, "gain_pct": 30.0,
           "source": "random order", "first_run": True, "file": "a.json"}  # fmt: skip
    table = mod.tables([row], {"a.json": "start spilled"})
    (split,) = [v for k, v in table.items() if "by whether the start spilled" in k]
    assert split[0]["group"] == "triton-register-budget-num-warps-maxnreg: start spilled"
    assert split[0]["advanced"] == 1


def test_moves_are_split_by_how_much_the_start_waited_on_loads() -> None:
    mod = load_script("move_outcomes")
    spilled = {"source": "results/profiles/h100-blind53/sglang_kda_cumsum--triton_v1--seqs_1_seqlen_8192_heads_32_head_dim_128_chunk_64.json"}  # fmt: skip
    docs = [
        {"_file": "a.json", "kernel": "sglang_kda_cumsum", "start_profile": spilled},
        {"_file": "c.json", "kernel": "nowhere", "config": {"dims": {"n": 1}}},
    ]
    waits = mod.load_waits_at_the_start(docs)
    assert waits["c.json"] == "start not profiled"
    assert waits["a.json"].startswith("start waited on loads")
    row = {"arm": "catalog", "n": 3, "entry": "keep-enough-bytes-in-flight",
           "changes": ["tile_n x2"], "paired": False, "relaxed": False, "gain_pct": 2.0,
           "source": "ranked first", "first_run": True, "file": "a.json"}  # fmt: skip
    other = {**row, "entry": "size-warps-to-the-row", "gain_pct": -3.0, "file": "c.json"}
    table = mod.tables([row, other], load_waits={"a.json": "start waited on loads under 40%"})
    (split,) = [v for k, v in table.items() if "waited on loads" in k]
    groups = {r["group"]: r["advanced"] for r in split}
    assert groups == {
        "keep-enough-bytes-in-flight: start waited on loads under 40%": 1,
        "the other entries: start not profiled": 0,
    }


def test_reduction_tiles_are_compared_by_start_condition() -> None:
    mod = load_script("move_outcomes")

    def trial(n: int, block_k: int | None, us: float, move: str = "") -> dict:
        return {"n": n, "values": {"block_k": block_k, "num_warps": 4}, "status": "ok",
                "duration_us": us, "move": move}  # fmt: skip

    def doc(name: str, grid: list[dict], walk: list[dict]) -> dict:
        return {
            "_file": name, "kernel": name, "spec": "s", "config": {"name": "c"},
            "start_us": 100.0, "knobs": {"block_k": [None, 16, 32, 64, 128], "num_warps": [4]},
            "rows": [{"arm": "catalog", "trajectory": walk},
                     {"arm": "grid", "trajectory": [trial(1, None, 100.0), *grid]}],
        }  # fmt: skip

    wider = "#1 e: block_k None (launched as 64) -> 128 (tile_k x2)"
    docs = [
        # launched as 64 (read from the move): the smaller 32 won, the wider 128 lost
        doc("a", [trial(2, 32, 80.0), trial(3, 128, 120.0)],
            [trial(1, None, 100.0), trial(2, 128, 120.0, wider)]),
        # launched as 64 (from its profile): nothing beat the start; None counts as 64
        doc("b", [trial(2, 16, 150.0), trial(3, None, 99.5)], [trial(1, None, 100.0)]),
    ]  # fmt: skip
    profiles = {"a": {"shared_mem_per_block_kb": 160.0}, "b": {"shared_mem_per_block_kb": 20.0}}
    runs = mod.tile_runs(
        docs,
        roles_of=lambda spec: {"block_k": "tile_k", "num_warps": "warps"},
        profile_of=lambda d: profiles[d["kernel"]],
        launched_of=lambda d: {"block_k": 64} if d["kernel"] == "b" else {},
    )
    assert [(r["kernel"], r["start"], r["best"]) for r in runs] == [("a", 64, 32), ("b", 64, 64)]
    assert runs[0]["grid"] == [(32, 20.0), (128, -20.0)]
    assert runs[1]["grid"] == [(16, -50.0), (64, 0.5)]
    assert runs[0]["conditions"]["shared_mem_per_block_kb >= 100"] is True
    assert runs[1]["conditions"]["pct_of_floor >= 60"] is None  # not in its profile

    moves = mod.trial_outcomes(docs)
    table = {(r["role"], r["condition"]): r for r in mod.tile_table(runs, moves)}
    every = table[("tile_k", "every run")]
    assert (every["runs"], every["kernels"], every["runs_room_both_ways"]) == (2, 2, 2)
    assert (every["best_smaller"], every["best_none"], every["best_smaller_kernels"]) == (1, 1, 1)
    assert (every["grid_smaller_trials"], every["grid_smaller_faster"]) == (2, 1)
    assert (every["grid_other_trials"], every["grid_other_faster"]) == (2, 0)
    # the one walking move (wider, trial 2 of the catalog arm) is alone at its position
    assert every["walk_larger"] == [1, 0, 0.0] and every["walk_smaller"] == [0, 0, 0.0]
    held = table[("tile_k", "shared_mem_per_block_kb >= 100: held")]
    assert (held["runs"], held["best_smaller"], held["grid_smaller_clear"]) == (1, 1, 1)
    assert table[("tile_k", "pct_of_floor >= 60: held")]["runs"] == 0
    assert table[("kv_tile", "every run")]["runs"] == 0
    text = "\n".join(mod.render_tile_table(list(table.values())))
    assert "| tile_k | every run | 2 | 2 | 1 / 0 / 0 / 1 of 2 | 1 | 1/2 (50%) / 1 |" in text


def test_knob_roles_are_read_from_the_spec_s_syntax(tmp_path: Path) -> None:
    mod = load_script("move_outcomes")
    (tmp_path / "spec.py").write_text(
        "import missing_module\n"
        "K = (Knob('block_k', 'int', (16, 32), 'tile_k'),\n"
        "     Knob(name='w', type='int', values=(4,), role='warps'), Knob(x, 'int', (), 'r'))\n"
    )
    assert mod.spec_knob_roles("spec.py", tmp_path) == {"block_k": "tile_k", "w": "warps"}
    assert mod.spec_knob_roles("nowhere", tmp_path) == {}


def test_record_conditioning_counts_pairs_within_one_run_arm_and_band() -> None:
    conditioning = load_script("record_conditioning")
    rows = [
        {
            "kernel": "k",
            "run": 0,
            "arm": "catalog",
            "from_waves": "under one wave",
            "gain_pct": g,
            "s": s,
        }
        for g, s in ((5.0, 0.9), (0.0, 0.1), (0.0, 0.9))
    ] + [
        # another band of the same run: never paired with the rows above
        {
            "kernel": "k",
            "run": 0,
            "arm": "catalog",
            "from_waves": "four waves or more",
            "gain_pct": 0.0,
            "s": 1.0,
        }
    ]
    result = conditioning.pairwise_order(rows, lambda r: r["s"])
    # the advancing trial against the two that did not: one right, one tie
    assert result == {"share": 0.75, "pairs": 2}
    assert conditioning.pairwise_order(rows, lambda r: r["s"], kernels={"other"})["share"] is None


def test_record_conditioning_counts_move_kinds_by_reuse() -> None:
    conditioning = load_script("record_conditioning")

    def row(changes: list[str], intensity: float | None, gain: float) -> dict[str, Any]:
        metrics = {} if intensity is None else {"arithmetic_intensity": intensity}
        return {"changes": changes, "paired": False, "from_band_metrics": metrics, "gain_pct": gain}

    rows = [
        row(["pipeline_stages +1"], 0.5, 5.0),  # streaming, advanced
        row(["pipeline_stages +1"], 200.0, 0.0),  # reusing, not advanced
        row(["tile_m x2", "warps /2"], 200.0, 3.0),  # counts for each knob
        row(["warp_specialization =true"], 200.0, 0.0),  # a set value keeps its name
        row(["tile_m x2"], None, 9.0),  # no intensity recorded: left out
    ]
    found = {r["move"]: r for r in conditioning.by_reuse(rows)}
    assert found["pipeline_stages up"] == {
        "move": "pipeline_stages up",
        "streaming": {"trials": 1, "advanced": 1},
        "reusing": {"trials": 1, "advanced": 0},
    }
    assert found["tile_m up"]["reusing"] == {"trials": 1, "advanced": 1}
    assert found["warps down"]["reusing"] == {"trials": 1, "advanced": 1}
    assert found["warp_specialization =true"]["reusing"] == {"trials": 1, "advanced": 0}
    assert set(found) == {
        "pipeline_stages up",
        "tile_m up",
        "warps down",
        "warp_specialization =true",
    }
