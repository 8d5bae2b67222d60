"""The cycle's progress log names the state that did the work; the fake backend says 'fake'."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from workflow_fixtures import FASTER_STEP, make_project

from kbopt.bench.classify import classify
from kbopt.cli import main
from kbopt.workflow.record import load


def test_progress_log_matches_the_record_and_the_fake_says_so(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    plan = make_project(tmp_path, [FASTER_STEP])
    argv = ["--root", str(tmp_path), "cycle", "toy", "--target", "pct_of_floor>=90"]
    argv += ["--from", "toy_v1", "--designer", f"scripted:{plan}", "--backend", "fake"]
    assert main([*argv, "--run-id", "log1"]) == 0
    err = capsys.readouterr().err
    lines = [ln.split(None, 2)[1:] for ln in err.splitlines() if ln.startswith("[cycle]")]
    shown = [(state, message) for state, *rest in lines for message in (rest or [""])]
    record = load(tmp_path / "runs" / "log1")
    # every event of the record is shown under the state the record gives it, in order
    assert shown[:-1] == [(e.state, e.message) for e in record.events]
    assert shown[-1] == ("DONE", "")
    states = dict((m.split(";")[0], s) for s, m in shown)
    assert states["baseline measured"] == "PROFILE"
    assert states["read the devlog overview and current best results"] == "ANALYZE"
    assert any(s == "SELECT" and m.startswith("language ") for s, m in shown)
    # the fake backend's root cause names its figures as fake stand-ins
    cause = re.search(r"Root cause: (.*)", record.profile or "")
    assert cause and "fake backend" in cause.group(1)
    assert "estimated from timing" not in cause.group(1)


def test_absent_percentages_are_not_printed_as_zero() -> None:
    cls = classify({"duration_us": 10.0}, from_counters=False)
    assert "(0%)" not in cls.root_cause
    assert "DRAM (not measured)" in cls.root_cause
    assert "compute (not measured)" in cls.root_cause
    measured = classify({"dram_throughput_pct": 0.0, "sm_throughput_pct": 5.0}, from_counters=True)
    assert "DRAM (0%)" in measured.root_cause  # a measured zero is still shown
