"""The empty-programs probe's kernel and work table, run small in Triton's interpreter: each
live tile is added exactly once whatever the padding, and the empty programs change nothing."""

from __future__ import annotations

import pytest

from tests.script_module import load_script

probe = load_script("empty_programs_probe")


def test_work_table_spreads_the_live_tiles_among_the_empty_programs():
    table = probe.work_table(3, 4, "cpu").tolist()
    assert table == [0, -1, -1, -1, 1, -1, -1, -1, 2, -1, -1, -1]
    assert probe.work_table(0, 5, "cpu").tolist() == [-1] * 5


@pytest.mark.parametrize("live", [4, 96])
def test_padded_grids_give_the_cut_grids_result(live):
    result = probe.run_probe(live, [1, 3], 16, 4, "cpu", time_it=False)
    assert [r["programs"] for r in result["rows"]] == [live, 3 * live, 3 * live]
    assert [r["live"] for r in result["rows"]] == [live, live, 0]


def test_a_wrong_table_is_caught(monkeypatch):
    real = probe.work_table
    # every live program told to own tile 0: the other tiles are never added
    monkeypatch.setattr(
        probe, "work_table", lambda live, pad, dev: real(live, pad, dev).clamp(max=0)
    )
    with pytest.raises(SystemExit, match="differs from torch"):
        probe.run_probe(4, [1], 16, 4, "cpu", time_it=False)


def test_the_command_refuses_a_grid_not_cut_first(capsys):
    with pytest.raises(SystemExit):
        probe.main(["--pad", "2,4"])
    assert "the first must be 1" in capsys.readouterr().err
