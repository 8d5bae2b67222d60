"""scripts/stall_ledger.py reads ncu's warp-stall samples per SASS instruction."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

from script_module import load_script

REPO = Path(__file__).resolve().parent.parent
RESULTS = REPO / "kernels" / "mla_decode" / "results"
FLASHMLA = RESULTS / "stall-source-20261205T0446Z-NVIDIA-H200-flashmla.csv.gz"
CUTE_V17 = RESULTS / "stall-source-20261205T0446Z-NVIDIA-H200-cute_v17.csv.gz"


sl = load_script("stall_ledger")


def test_every_barrier_held_sample_is_credited_to_a_barrier_above_it():
    for path in (FLASHMLA, CUTE_V17):
        led = sl.ledger(sl.read_source_page(path), 10)
        waits = led["barrier_waits_pct"]
        assert abs(sum(waits.values()) - led["reasons_pct"]["barrier"]) < 0.1
        assert (
            "no barrier within reach above" not in waits
            or waits["no barrier within reach above"] < 0.5
        )
        assert waits["wgmma wait (WARPGROUP.DEPBAR)"] > 5  # both wait for their products
        assert 99.5 < sum(led["reasons_pct"].values()) < 100.5  # every sample counted once


def test_the_seesaw_waits_at_its_hand_over_barriers_more_than_flashmla():
    ours = sl.ledger(sl.read_source_page(CUTE_V17), 10)
    theirs = sl.ledger(sl.read_source_page(FLASHMLA), 10)

    def hand_over(led):
        return sum(v for w, v in led["barrier_waits_pct"].items() if w.startswith("named barrier"))

    assert hand_over(ours) * ours["samples"] > 2 * hand_over(theirs) * theirs["samples"]


def test_plain_csv_json_output_and_one_line_errors(tmp_path, capsys):
    plain = tmp_path / "page.csv"
    plain.write_bytes(gzip.decompress(CUTE_V17.read_bytes()))
    assert sl.main([str(plain), "--json", "--top", "3"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert len(out["page.csv"]["hottest"]) == 3
    bad = tmp_path / "raw.csv"
    bad.write_text('"ID","Kernel Name"\n"0","k"\n')
    assert sl.main([str(bad)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "raw.csv" in err
    assert sl.main([str(tmp_path / "missing.csv")]) == 2
