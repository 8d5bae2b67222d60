"""The Remote Execution Context: loading, the wrapper, the block."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from kbopt.agents.remote import RemoteContext
from kbopt.errors import KbError


def test_wrap_runs_in_the_one_allocation_from_the_remote_root() -> None:
    ctx = RemoteContext(host="me@login", job_id="4242", workdir="/scratch/my project")
    argv = ctx.wrap(["python", "-m", "pytest", "-k", "a and b"])
    assert argv[0] == "ssh" and argv[-2] == "me@login"  # ssh options come before the host
    assert argv[-1] == (
        "cd '/scratch/my project' && srun --jobid=4242 --overlap python -m pytest -k 'a and b'"
    )
    assert ctx.wrap_login(["ls"])[-2:] == ["me@login", "cd '/scratch/my project' && ls"]
    block = ctx.block()
    assert block.startswith("## Remote Execution Context")
    assert "SLURM job 4242" in block and "do not allocate another" in block


def test_load_reports_bad_files_clearly(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    good = tmp_path / "ctx.json"
    good.write_text(json.dumps({"host": "h", "job_id": "1", "workdir": "/w", "files": "remote"}))
    assert RemoteContext.load(good).files == "remote"
    monkeypatch.setenv("KBOPT_REMOTE", str(good))
    assert RemoteContext.from_env() == RemoteContext.load(good)
    bad = tmp_path / "bad.json"
    bad.write_text('{"host": "h",\n "job_id": "x1", "workdir": "/w"}')
    with pytest.raises(KbError, match="job_id"):
        RemoteContext.load(bad)
    bad.write_text('{"host": "h", "job_id": "1", "workdir": "/w", "colour": "red"}')
    with pytest.raises(KbError, match="colour"):
        RemoteContext.load(bad)
    bad.write_text("{not json")
    with pytest.raises(KbError, match=r"bad.json:1: not JSON"):
        RemoteContext.load(bad)
    with pytest.raises(KbError, match="cannot read"):
        RemoteContext.load(tmp_path / "missing.json")
