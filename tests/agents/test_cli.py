"""`kbopt agent ...` from the command line."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from kbopt.cli import main


def _kbopt(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "kbopt", *args], capture_output=True, text=True, env=env, check=False
    )


def test_run_without_a_key_is_one_clear_line_and_non_zero() -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith("ANTHROPIC_")}
    for args in (["agent", "run", "Apply CUDA Graph to train.py"], ["agent", "run", "x", "--json"]):
        proc = _kbopt(*args, env=env)
        assert proc.returncode == 2
        out = (proc.stderr + proc.stdout).strip()
        assert "ANTHROPIC_API_KEY is not set" in out
        assert "Traceback" not in out
        if "--json" not in args:
            assert len(proc.stderr.strip().splitlines()) == 1 and proc.stdout == ""


def test_autopilot_checks_the_analysis_before_the_key(tmp_path: Path) -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith("ANTHROPIC_")}
    bad = tmp_path / "ANALYSIS.md"
    bad.write_text("Primary bottleneck: memory-bound\nRecommendations:\n1. [Urgent] x\n")
    proc = _kbopt("agent", "autopilot", str(bad), env=env)
    assert proc.returncode == 2 and f"{bad}:3:" in proc.stderr
    proc = _kbopt("agent", "autopilot", str(tmp_path / "missing.md"), env=env)
    assert proc.returncode == 2 and "cannot read" in proc.stderr


def test_dry_run_shows_the_kickoff_without_a_key(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    assert (
        main(["agent", "run", "Générer un kernel TileIR", "--sm", "100", "--dry-run", "--json"])
        == 0
    )
    out = json.loads(capsys.readouterr().out)
    assert "kernel-triton-specialist -> kernel-tileir-specialist" in out["task"]
    assert "edit_file" not in out["tools"] and out["system"].startswith("You are the orchestrator")
    analysis = tmp_path / "ANALYSIS.md"
    analysis.write_text(
        "Primary bottleneck: memory-bound\nEvidence: x\nRecommendations:\n1. [Low] B\n2. [High] A\n"
    )
    assert main(["agent", "autopilot", str(analysis), "--dry-run"]) == 0
    text = capsys.readouterr().out
    assert text.index("1. **[High] A**") < text.index("2. **[Low] B**")  # the plan's order


def test_route_json(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["agent", "route", "Optimiser pour TileIR", "--existing-triton", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["stages"] == ["kernel-tileir-specialist"] and out["rule"] == "tileir-convert"
    assert main(["agent", "route", "Write a kernel"]) == 2
    assert "--sm" in capsys.readouterr().err


def test_route_to_checks_a_delegation(capsys: pytest.CaptureFixture[str]) -> None:
    task = "Générez un kernel CuTe DSL pour l'opération GEMM"
    assert main(["agent", "route", task, "--to", "kernel-triton-specialist", "--json"]) == 1
    out = json.loads(capsys.readouterr().out)
    assert (
        out
        == {
            "accepted": False,
            "rule": "cute-domain",
            "message": out["message"],
        }
        and "kernel-cute-specialist" in out["message"]
    )
    assert main(["agent", "route", task, "--to", "kernel-cute-specialist"]) == 0
    assert "accepted: kernel-cute-specialist (rule cute)" in capsys.readouterr().out


def test_tool_command_runs_a_tool_and_reports_errors(capsys: pytest.CaptureFixture[str]) -> None:
    as_profiler = ["--role", "profiler"]
    argv = ["agent", "tool", "list_exports", *as_profiler, "--input", '{"module": "kbopt.errors"}']
    assert main([*argv, "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["ok"] and {"KbError", "ProblemList"} <= {n["name"] for n in out["result"]["names"]}
    assert (
        main(
            [
                "agent",
                "tool",
                "read_file",
                *as_profiler,
                "--input",
                '{"path": "../outside-the-project.py"}',
            ]
        )
        == 1
    )
    assert "outside the project root" in capsys.readouterr().err
    assert main(["agent", "tool", "read_file", *as_profiler, "--input", "{nope"]) == 2
    assert main(["agent", "tool", "frobnicate", *as_profiler]) == 2
    # The role is required and its tool set applies: the orchestrator never edits a file.
    with pytest.raises(SystemExit):
        main(["agent", "tool", "edit_file", "--input", "{}"])
    edit = '{"path": "README.md", "old": "a", "new": "b"}'
    assert main(["agent", "tool", "edit_file", "--role", "orchestrator", "--input", edit]) == 1
    assert "not available to orchestrator" in capsys.readouterr().err


def test_tools_listing(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["agent", "tools", "--role", "orchestrator", "--json"]) == 0
    names = [t["name"] for t in json.loads(capsys.readouterr().out)]
    assert "delegate" in names and "edit_file" not in names


def test_export_claude_check_is_green_in_the_repository(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["agent", "export-claude", "--check", "--json"]) == 0
    assert json.loads(capsys.readouterr().out) == {"ok": True, "stale": []}


def test_run_help_says_the_defaults_and_what_remote_is(capsys: pytest.CaptureFixture[str]) -> None:
    from kbopt.agents.roles import ROLES
    from kbopt.agents.runner import AgentConfig

    with pytest.raises(SystemExit):
        main(["agent", "run", "--help"])
    text = " ".join(capsys.readouterr().out.split())
    cfg = AgentConfig()
    for option, default in (
        ("MAX_TOKENS", cfg.max_tokens),
        ("MAX_TURNS", cfg.max_turns),
        ("MAX_DELEGATIONS", cfg.max_delegations),
    ):
        assert f"KBOPT_AGENT_{option} or {default})" in text, option
    assert "--remote CONTEXT.json a JSON file" in text
    with pytest.raises(SystemExit):
        main(["agent", "tools", "--help"])
    out = capsys.readouterr().out
    assert all(role in out for role in ROLES), (list(ROLES), out)
