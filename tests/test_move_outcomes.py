"""scripts/move_outcomes.py: the ablation's moves, counted by kind."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from script_module import load_script

REPO = Path(__file__).resolve().parent.parent


def test_move_texts_name_their_source_entry_and_changes() -> None:
    mod = load_script("move_outcomes")
    parse = mod.parse_move
    assert parse(
        "#1 keep-enough-bytes-in-flight: block_size None (launched as 8192) -> 16384 (tile_n x2)"
    ) == {
        "source": "ranked first",
        "entry": "keep-enough-bytes-in-flight",
        "changes": ["tile_n x2"],
        "paired": False,
    }
    moved = parse(
        "back at trial 15's values, #3 keep-enough-bytes-in-flight, warps alongside: "
        "block_d 64 -> 128 (tile_n x2), num_warps 4 -> 8 (warps x2)"
    )
    assert moved["source"] == "ranked lower" and moved["paired"]
    assert moved["changes"] == ["tile_n x2", "warps x2"]
    fired = parse(
        "from the best so far, warning 1 wave-quantization-from-coarse-tiles: "
        "block_size 32768 -> 16384 (tile_n /2)"
    )
    assert fired["source"] == "fired anti-pattern"
    assert fired["entry"] == "wave-quantization-from-coarse-tiles"
    unranked = parse(
        "unranked size-warps-to-the-row: num_warps 2 -> 1 (warps /2) "
        "[preconditions not met: the kernel has no row_len]"
    )
    assert unranked["source"] == "unranked" and unranked["changes"] == ["warps /2"]
    assert parse("split-kv-decode: num_splits 8 -> 33 (splits one_wave)")["source"] == (
        "random order"
    )


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
